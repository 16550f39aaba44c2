/**
 * The remote agents this gateway delegates to. Each is configured by card
 * URL only; everything else — endpoint, identity, operator — comes from its
 * verified card (RW-003 §10.3: record the exact card form and digest used).
 * A card Baton has verified is announced on its agent control stream, so
 * a changed card moves that head and invalidates fences taken on the old one.
 */
import { z } from 'zod';
import { EnvCredential, credentialHeader } from './credential.ts';
import { assertEndpointAllowed } from '../cards/endpoint-policy.ts';
import { A2A_LEGACY_PROTOCOL_VERSION } from '@a2a-js/sdk/compat/v0_3';
import { assertCardUsableForDelegation } from '../cards/lifecycle.ts';
import type { CardResolver } from '../cards/resolver.ts';
import type { CardVerification } from '../cards/verify.ts';
import type { DelegateeOption } from '../contracts/presets.ts';
import type { ControlScopeRef } from '../control/scope.ts';
import { invalidRequest, isBatonError, unavailable, unsupported } from '../errors.ts';
import { Identifier } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { Store } from '../store/port.ts';
import { LEGACY_VERSION } from './legacy-remote.ts';
import { CONTRACT_EXTENSION } from './present.ts';
import { RequireApproval } from '../gates/policy.ts';
import { identityOf, OperatorFacts, type CardObservation, type DelegateeIdentity } from './delegatee-identity.ts';

export const DelegateeConfig = z.strictObject({
  /** Path segment Baton serves this delegatee under: /agents/<id>. */
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
  cardUrl: z.url(),
  /** Contract acceptance checks applied at read-back. */
  acceptance: z.strictObject({ minArtifacts: z.number().int().min(0).optional(), allowedMediaTypes: z.array(z.string()).optional() }).default({}),
  /** Display name on Baton's card for this delegatee; defaults to the remote card's. */
  name: Identifier.optional(),
  /** Credential Baton presents to the delegatee: a header filled from an environment variable (never a literal secret). */
  auth: EnvCredential.optional(),
  /**
   * How its notifications to Baton's webhook must authenticate: the per-task
   * token always; `token+jwt` also requires a JWT signed by a key pinned for
   * its card origin.
   */
  inboundAuth: z.enum(['token', 'token+jwt']).default('token'),
  /** Origins besides the card URL's that this delegatee's endpoints may use (src/cards/endpoint-policy.ts). */
  endpointOrigins: z.array(z.url()).default([]),
  /** Allow plain http endpoints for this delegatee (https only by default). */
  allowHttp: z.boolean().default(false),
  /**
   * The RW-003 facts its card does not carry (a plain A2A agent), attested by
   * the operator (delegatee-identity.ts). A signed card's own extension wins.
   */
  rw003: OperatorFacts.optional(),
  /** Accept this delegatee's card unsigned (never the default); every attempt records `signed: false`. */
  allowUnsigned: z.boolean().optional(),
  /** Every effect needs a named human approval (`true` = T3; T4 adds an independent post-effect review): src/gates. */
  requireApproval: RequireApproval.optional(),
});
export type DelegateeConfig = z.infer<typeof DelegateeConfig>;

export interface ResolvedDelegatee {
  config: DelegateeConfig;
  /** Headers every call to this delegatee carries (its credential, if configured). */
  headers: Record<string, string>;
  verification: CardVerification;
  option: DelegateeOption;
  /** The remote JSON-RPC endpoint. */
  endpoint: string;
  /** The A2A version spoken there: 1.0, or 0.3 through the SDK's compatibility layer. */
  protocolVersion: '1.0' | '0.3';
  agentScope: ControlScopeRef;
  /** RW-003 §10.3: the card form, digests and identity source this delegation used. */
  observation: CardObservation;
}

/** A delegatee whose card Baton could not verify: its fault, not the caller's (reported on /readyz). */
export interface CardProblem {
  delegatee: string;
  message: string;
  since: string;
}

/** Marks an `unavailable` refusal as "the delegatee's card did not verify" (a breaker signal, not a network failure). */
export const CARD_REJECTED = 'card_rejected';

export class DelegateeRegistry {
  private byId: Map<string, DelegateeConfig>;

  constructor(
    configs: readonly DelegateeConfig[],
    private readonly deps: {
      resolver: CardResolver;
      store: Store;
      spaceId: string;
      announcer: ActorRef;
      /** Told when a delegatee's card starts or stops failing verification (the log). */
      onCardProblem?: (delegatee: string, problem: CardProblem | undefined) => void;
    },
  ) {
    this.byId = new Map(configs.map((c) => [c.id, c]));
  }

  /**
   * Swaps the whole set of delegatees in one synchronous step (a reload);
   * what Baton remembers about cards it verified stays, keyed by content.
   */
  replace(configs: readonly DelegateeConfig[]): void {
    this.byId = new Map(configs.map((c) => [c.id, c]));
    for (const id of this.problems.keys()) if (!this.byId.has(id)) this.problems.delete(id);
  }

  /** Re-fetches a delegatee's card now, ignoring the cache's max-age, and verifies it (`baton cards refresh`). */
  async refresh(id: string): Promise<ResolvedDelegatee> {
    const config = this.byId.get(id);
    if (!config) throw invalidRequest('no such delegatee', { delegatee: id });
    this.deps.resolver.forget(config.cardUrl);
    return this.resolve(id);
  }

  /** Delegatees whose card last failed verification, for /readyz. */
  cardProblems(): CardProblem[] {
    return [...this.problems.values()];
  }

  private readonly problems = new Map<string, CardProblem>();

  ids(): string[] {
    return [...this.byId.keys()];
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  configOf(id: string): DelegateeConfig | undefined {
    return this.byId.get(id);
  }

  /**
   * The headers every call to a delegatee carries: its credential, from
   * configuration alone (no card verification); the contract extension
   * activated, as a card may mark it `required`, and such an agent refuses any
   * request that does not activate it, a read-back or a cancel as much as a
   * send; and `A2A-Version: 0.3` when its card offered only v0.3, which routes
   * the call through the SDK's compatibility layer (legacy-remote.ts).
   */
  credentialsOf(id: string): Record<string, string> {
    const config = this.byId.get(id);
    if (!config) return {};
    return { ...{}, ...credentialHeaders(config), 'a2a-extensions': CONTRACT_EXTENSION, ...(this.versions.get(id) === '0.3' ? { 'a2a-version': LEGACY_VERSION } : {}) };
  }

  /** The A2A version each delegatee's card last offered (a wire-format choice, not authority). */
  private readonly versions = new Map<string, '1.0' | '0.3'>();

  /** Verifies the delegatee's card now (HTTP caching applies) and announces it on its agent stream. */
  async resolve(id: string): Promise<ResolvedDelegatee> {
    const config = this.byId.get(id);
    if (!config) throw invalidRequest('no such delegatee', { delegatee: id });
    const verification = await this.verified(config);
    const { option, observation, endpoint, protocolVersion } = this.usable(config, verification);
    const agentScope: ControlScopeRef = { space_id: this.deps.spaceId, scope_kind: 'agent', scope_id: option.card_ref.object_id };
    // Idempotent in the store; remembered here so an unchanged card costs no write per request.
    const key = announcementKey(observation);
    if (!this.announced.has(key)) await this.announce(agentScope, option, observation, key);
    this.lastCard.set(id, option.card_ref.object_id);
    this.versions.set(id, protocolVersion);
    return { config, verification, option, endpoint, protocolVersion, agentScope, observation, headers: this.credentialsOf(id) };
  }

  /**
   * A card that does not verify under the pinned keys is the delegatee's (or
   * its operator's) problem: refused as `unavailable` naming the delegatee,
   * remembered for /readyz — never `invalid_request`, which would blame the
   * caller (issue #17). A network failure is already `unavailable`.
   */
  private async verified(config: DelegateeConfig): Promise<CardVerification> {
    try {
      return await this.deps.resolver.resolve(config.cardUrl, 'public', { allowUnsigned: config.allowUnsigned });
    } catch (err) {
      if (!isBatonError(err) || err.code === 'unavailable') throw err;
      this.noteProblem(config.id, err.message);
      throw unavailable(`delegatee ${config.id}: its card does not verify: ${err.message}`, { delegatee: config.id, reason: CARD_REJECTED, ...err.details }, err);
    }
  }

  /**
   * A verified card the gateway's rules still refuse (no RW-003 identity, an
   * endpoint off the pinned origin or over http): refused as before, and
   * remembered for /readyz like a card that does not verify (issue 25 item 8).
   */
  private usable(config: DelegateeConfig, verification: CardVerification): UsableCard {
    try {
      const usable = usableCard(config, verification);
      if (this.problems.delete(config.id)) this.deps.onCardProblem?.(config.id, undefined);
      return usable;
    } catch (err) {
      if (isBatonError(err)) this.noteProblem(config.id, err.message);
      throw err;
    }
  }

  private noteProblem(id: string, message: string): void {
    if (this.problems.get(id)?.message === message) return;
    const problem = { delegatee: id, message, since: new Date().toISOString() };
    this.problems.set(id, problem);
    this.deps.onCardProblem?.(id, problem);
  }

  private readonly announced = new Set<string>();
  private readonly lastCard = new Map<string, string>();

  /** The agent card id this delegatee last verified as (its agent stream), if any. */
  lastCardId(id: string): string | undefined {
    return this.lastCard.get(id);
  }

  private async announce(agentScope: ControlScopeRef, option: DelegateeOption, o: CardObservation, key: string): Promise<void> {
    await this.deps.store.control.appendControl({
      event_type: 'rw003.agent_card.published',
      control_scope_ref: agentScope,
      actor_ref: this.deps.announcer,
      idempotency_key: key,
      // Only what the idempotency key stands for: the same signed content may arrive
      // with fresh signatures (ES256 is randomised) after the agent restarts.
      payload: {
        card_ref: option.card_ref,
        form: o.form,
        ...(o.identity === 'operator_attested' ? { identity: o.identity, attested_by: o.attested_by ?? null, facts_digest: o.facts_digest ?? null, signed: o.signed } : {}),
      },
    });
    this.announced.add(key);
  }
}

function credentialHeaders(config: DelegateeConfig): Record<string, string> {
  if (!config.auth) return {};
  const header = credentialHeader(config.auth);
  if (!header) throw unsupported('delegatee credential is not set in the environment', { delegatee: config.id, env: config.auth.env });
  return header;
}

/** A card's content with its identity facts: a changed fact is a new announcement. */
function announcementKey(o: CardObservation): string {
  return o.identity === 'card_extension' ? `verified:${o.payload_digest}` : `verified:${o.payload_digest}:${o.facts_digest}:${o.signed ? 'signed' : 'unsigned'}`;
}

/** What the gateway's rules make of a verified card: who the delegatee is, and where to call it. */
export interface UsableCard extends DelegateeIdentity {
  endpoint: string;
  protocolVersion: '1.0' | '0.3';
}

/**
 * Every rule a verified card must pass before Baton delegates to it: an
 * RW-003 identity (its own or the operator's), an active lifecycle, a JSON-RPC
 * interface Baton speaks, an endpoint the operator allowed. Throws the
 * gateway's own refusal; `baton config check` applies exactly this.
 */
export function usableCard(config: DelegateeConfig, verification: CardVerification): UsableCard {
  const identity = identityOf(config.id, verification, config.rw003);
  const { option, lifecycle } = identity;
  // RW-003 §4.3: a card asserting anything but active refuses new delegation.
  assertCardUsableForDelegation({ ...{}, ...lifecycle, state: lifecycle.state as 'active', head: option.card_ref, card_payload_digest: verification.payload_digest });
  const { endpoint, protocolVersion } = jsonRpcEndpoint(verification);
  assertEndpointAllowed(endpoint, config);
  return { ...{}, ...identity, endpoint, protocolVersion };
}

/** The JSON-RPC interface Baton talks to: v1.x preferred, else v0.3 through the SDK's compatibility layer. */
function jsonRpcEndpoint(v: CardVerification): { endpoint: string; protocolVersion: '1.0' | '0.3' } {
  const jsonRpc = v.card.supportedInterfaces.filter((i) => i.protocolBinding === 'JSONRPC');
  const current = jsonRpc.find((i) => i.protocolVersion.startsWith('1.'));
  if (current) return { endpoint: current.url, protocolVersion: '1.0' };
  const legacy = jsonRpc.find((i) => i.protocolVersion.startsWith(A2A_LEGACY_PROTOCOL_VERSION));
  if (legacy) return { endpoint: legacy.url, protocolVersion: '0.3' };
  throw unsupported('delegatee offers no A2A JSON-RPC interface Baton speaks (1.x, or 0.3)', { source: v.source.slice(0, 512) });
}
