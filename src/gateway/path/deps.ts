/** What the request path's steps share (wired once in src/main.ts). */
import type { HumanGates } from '../../gates/approvals.ts';
import type { IdSource } from '../../records/ids.ts';
import type { ActorRef } from '../../records/revision-ref.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import type { Clock } from '../../records/time.ts';
import type { Store } from '../../store/port.ts';
import type { Attempt, AttemptRepository } from '../attempts.ts';
import type { DelegationAuthority } from '../authority.ts';
import type { Caller } from '../callers.ts';
import type { DelegateeRegistry } from '../delegatees.ts';
import type { ProxyCards } from '../proxy-card.ts';
import type { RemoteClient } from '../remote.ts';
import type { Federation } from '../../federation/federation.ts';
import type { PathEvents } from './events.ts';
import type { InFlightCalls } from '../../mcp/in-flight.ts';
import type { Turn } from './turn.ts';

/** What the path needs of push notifications (src/push), so the two stay decoupled. */
export interface PushHooks {
  /** Checks an integrator's webhook config before anything is admitted; throws on a bad one. */
  validate(config: JsonValue): void;
  /** Registers an integrator's webhook for a Baton task. */
  register(caller: Caller, attempt: Attempt, config: JsonValue): Promise<void>;
  /** Tells a task's webhooks of a state Baton set itself (a task held for approval, then denied). */
  notifyTask?(taskId: string, revisionId: string, task: JsonValue): Promise<void>;
  /** Baton's own webhook the delegatee should notify about this task. */
  inbound(taskId: string): { id: string; url: string; token: string };
}

/** Bounds of following an admitted effect to its verdict. */
export interface FollowLimits {
  /** How long a node's claim on a follow-up lasts before another node may take it over. */
  leaseMs: number;
  /** How long a blocking SendMessage waits at Baton before answering with the WORKING task. */
  blockingWaitMs: number;
  /** After this long without a terminal state the effect is recorded as unknown and escalated. */
  maxFollowMs: number;
  /** Poll intervals while waiting on a task that does not stream (exponential between them). */
  pollMinMs: number;
  pollMaxMs: number;
  /** How often the durable follower looks for follow-ups nobody holds. */
  tickMs: number;
  /** A turn still running after this long has its remote task id recorded durably (one more write). */
  recordTaskAfterMs: number;
}

export const DEFAULT_FOLLOW: FollowLimits = { leaseMs: 30_000, blockingWaitMs: 60_000, maxFollowMs: 3_600_000, pollMinMs: 20, pollMaxMs: 2_000, tickMs: 500, recordTaskAfterMs: 250 };

export interface PathDeps {
  store: Store;
  attempts: AttemptRepository;
  authority: DelegationAuthority;
  delegatees: DelegateeRegistry;
  cards: ProxyCards;
  remote: RemoteClient;
  clock: Clock;
  ids: IdSource;
  gatewayActor: ActorRef;
  spaceId: string;
  /** This process's name as a lease owner in the work queue. */
  node: string;
  follow: FollowLimits;
  events: PathEvents;
  push?: PushHooks;
  /** Separate-store upstreams: remote fences by signed head statements (issue #16). */
  federation?: Federation;
  /** Human authority gates (src/gates); absent when no approvals are configured. */
  gates?: HumanGates;
  /** MCP tool calls running in this process, so a stop can cancel them (src/mcp). */
  calls?: InFlightCalls;
  /** Admits and runs an approved MCP call (src/mcp/gate.ts): the gate's requests name either adapter. */
  mcp?: {
    resumeApproved(taskId: string): Promise<Attempt>;
    /** Continues an MCP call the durable follower claimed (src/mcp/run.ts followCall). */
    follow(turn: Turn, row: { deadline: string }): Promise<void>;
  };
}
