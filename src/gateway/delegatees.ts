/**
 * The remote agents this gateway delegates to. Each is configured by card
 * URL only; everything else — endpoint, identity, operator — comes from its
 * verified card (RW-003 §10.3: record the exact card form and digest used).
 * A card Baton has verified is announced on its agent control stream, so
 * a changed card moves that head and invalidates fences taken on the old one.
 */
import { z } from 'zod';
import { assertEndpointAllowed } from '../cards/endpoint-policy.ts';
import { assertCardUsableForDelegation } from '../cards/lifecycle.ts';
import type { CardResolver } from '../cards/resolver.ts';
import type { CardVerification } from '../cards/verify.ts';
import type { DelegateeOption } from '../contracts/presets.ts';
import type { ControlScopeRef } from '../control/scope.ts';
import { invalidRequest, unsupported } from '../errors.ts';
import { Identifier } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { Store } from '../store/port.ts';
import { delegateeOf } from './identity.ts';

export const DelegateeConfig = z.strictObject({
  /** Path segment Baton serves this delegatee under: /agents/<id>. */
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
  cardUrl: z.url(),
  /** Contract acceptance checks applied at read-back. */
  acceptance: z.strictObject({ minArtifacts: z.number().int().min(0).optional(), allowedMediaTypes: z.array(z.string()).optional() }).default({}),
  /** Display name on Baton's card for this delegatee; defaults to the remote card's. */
  name: Identifier.optional(),
  /** Credential Baton presents to the delegatee: a header filled from an environment variable (never a literal secret). */
  auth: z.strictObject({ header: z.string().regex(/^[a-z0-9-]+$/), env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/), scheme: z.string().optional() }).optional(),
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
});
export type DelegateeConfig = z.infer<typeof DelegateeConfig>;

export interface ResolvedDelegatee {
  config: DelegateeConfig;
  /** Headers every call to this delegatee carries (its credential, if configured). */
  headers: Record<string, string>;
  verification: CardVerification;
  option: DelegateeOption;
  /** The remote JSON-RPC endpoint for A2A v1.0. */
  endpoint: string;
  agentScope: ControlScopeRef;
}

export class DelegateeRegistry {
  private readonly byId: Map<string, DelegateeConfig>;

  constructor(
    configs: readonly DelegateeConfig[],
    private readonly deps: { resolver: CardResolver; store: Store; spaceId: string; announcer: ActorRef },
  ) {
    this.byId = new Map(configs.map((c) => [c.id, c]));
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  configOf(id: string): DelegateeConfig | undefined {
    return this.byId.get(id);
  }

  /** The credential headers for a delegatee, from configuration alone (no card verification). */
  credentialsOf(id: string): Record<string, string> {
    const config = this.byId.get(id);
    return config ? credentialHeaders(config) : {};
  }

  /** Verifies the delegatee's card now (HTTP caching applies) and announces it on its agent stream. */
  async resolve(id: string): Promise<ResolvedDelegatee> {
    const config = this.byId.get(id);
    if (!config) throw invalidRequest('no such delegatee', { delegatee: id });
    const verification = await this.deps.resolver.resolve(config.cardUrl);
    const option = delegateeOf(verification.rw003, verification.payload_digest, verification.source);
    // RW-003 §4.3: a card asserting anything but active refuses new delegation.
    assertCardUsableForDelegation({
      agent_card_id: option.card_ref.object_id,
      state: verification.rw003?.lifecycle.state ?? 'proposed',
      head: option.card_ref,
      card_payload_digest: verification.payload_digest,
    });
    const endpoint = jsonRpcEndpoint(verification);
    assertEndpointAllowed(endpoint, config);
    const agentScope: ControlScopeRef = { space_id: this.deps.spaceId, scope_kind: 'agent', scope_id: option.card_ref.object_id };
    // Idempotent in the store; remembered here so an unchanged card costs no write per request.
    if (!this.announced.has(verification.payload_digest)) await this.announce(agentScope, option, verification);
    this.lastCard.set(id, option.card_ref.object_id);
    return { config, verification, option, endpoint, agentScope, headers: credentialHeaders(config) };
  }

  private readonly announced = new Set<string>();
  private readonly lastCard = new Map<string, string>();

  /** The agent card id this delegatee last verified as (its agent stream), if any. */
  lastCardId(id: string): string | undefined {
    return this.lastCard.get(id);
  }

  private async announce(agentScope: ControlScopeRef, option: DelegateeOption, verification: CardVerification): Promise<void> {
    await this.deps.store.control.appendControl({
      event_type: 'rw003.agent_card.published',
      control_scope_ref: agentScope,
      actor_ref: this.deps.announcer,
      idempotency_key: `verified:${verification.payload_digest}`,
      // Only what the idempotency key stands for: the same signed content may arrive
      // with fresh signatures (ES256 is randomised) after the agent restarts.
      payload: { card_ref: option.card_ref, form: verification.form },
    });
    this.announced.add(verification.payload_digest);
  }
}

function credentialHeaders(config: DelegateeConfig): Record<string, string> {
  if (!config.auth) return {};
  const value = process.env[config.auth.env];
  if (!value) throw unsupported('delegatee credential is not set in the environment', { delegatee: config.id, env: config.auth.env });
  return { [config.auth.header]: config.auth.scheme ? `${config.auth.scheme} ${value}` : value };
}

function jsonRpcEndpoint(v: CardVerification): string {
  const iface = v.card.supportedInterfaces.find((i) => i.protocolBinding === 'JSONRPC' && (i.protocolVersion ?? '1.0').startsWith('1.'));
  if (!iface) throw unsupported('delegatee offers no A2A 1.x JSON-RPC interface', { source: v.source.slice(0, 512) });
  return iface.url;
}
