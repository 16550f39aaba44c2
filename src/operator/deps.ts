/**
 * What the operator's actions are built over (src/operator/service.ts and
 * the modules it delegates to): the store, the request path, the keys Baton
 * mints revisions with, and the optional push and human-gate hooks.
 */
import type { DelegationAuthority } from '../gateway/authority.ts';
import type { DelegateeRegistry } from '../gateway/delegatees.ts';
import type { Dispatcher } from '../gateway/dispatcher.ts';
import type { RemoteClient } from '../gateway/remote.ts';
import type { HumanGates } from '../gates/approvals.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { ControlScopeRef, ScopeKind } from '../control/scope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import type { Escalations } from './escalation.ts';

export interface OperatorDeps {
  store: Store;
  dispatcher: Dispatcher;
  delegatees: DelegateeRegistry;
  authority: DelegationAuthority;
  remote: RemoteClient;
  keyring: Keyring;
  escalations: Escalations;
  clock: Clock;
  ids: IdSource;
  spaceId: string;
  /** Baton's own actor: it mints revisions under the parent it is delegatee of. */
  gatewayActor: ActorRef;
  /** Requeues a dead delivery (the push outbox); absent when push is off. */
  requeue?: (deliveryId: string) => Promise<boolean>;
  /** Moves webhooks from a replaced attempt to its successor; absent when push is off. */
  carryPush?: (fromTaskId: string, toTaskId: string) => Promise<unknown>;
  /** Human authority gates; absent when no approvals are configured. */
  gates?: HumanGates;
}

/** A control scope in this gateway's space. */
export function scopeIn(spaceId: string, kind: ScopeKind, id: string): ControlScopeRef {
  return { space_id: spaceId, scope_kind: kind, scope_id: id };
}
