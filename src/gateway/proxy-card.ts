/**
 * The card Baton serves for each delegatee at /agents/<id>/: the remote's
 * skills, Baton's interfaces and security schemes, and an RW-003 identity of
 * its own — Baton's actor and operator, since Baton is who acts on the
 * caller's behalf. Signed with Baton's keys. An upstream gateway verifies it
 * like any other card and delegates to Baton as the exact revision it saw.
 */
import { AgentCard } from '@a2a-js/sdk';
import { cardSigningBytes } from '../cards/canonical-card.ts';
import { document, type PublishedDocument } from '../cards/publisher.ts';
import { RW003_CARD_EXTENSION_URI, type Rw003CardParams } from '../cards/extension.ts';
import { signCard } from '../cards/signer.ts';
import type { DelegateeOption } from '../contracts/presets.ts';
import type { Keyring } from '../keys/keyring.ts';
import { sha256Digest } from '../records/digest.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { DelegateeRegistry } from './delegatees.ts';
import { delegateeOf } from './identity.ts';
import { REQUEST_PLACEMENT } from './chain-placement.ts';
import { CONTRACT_EXTENSION } from './present.ts';
import { assertServable, servableForm } from '../cards/served-card.ts';

type Json = { [key: string]: JsonValue };

export interface ProxyCard {
  json: Json;
  /** The exact bytes served, with their validators (A2A §8.6.1: ETag, Last-Modified). */
  doc: PublishedDocument;
  internal: AgentCard;
  /** Baton's identity as the delegatee of this card's exact revision. */
  option: DelegateeOption;
}

export class ProxyCards {
  private readonly cache = new Map<string, Promise<ProxyCard>>();

  constructor(
    private readonly deps: {
      delegatees: DelegateeRegistry;
      keyring: Keyring;
      publicUrl: () => string;
      identity: Rw003CardParams;
      /** Baton relays verified outcomes to integrators' webhooks, whatever the delegatee offers. */
      push?: boolean;
    },
  ) {}

  /** The card for delegatee `id`, built once per process (a failure is retried on the next call). */
  get(id: string): Promise<ProxyCard> {
    return builtOnce(this.cache, id, () => this.build(id));
  }

  /** Rebuilds delegatee `id`'s card (or every one) on next use: after a card refresh or a reload. */
  forget(id?: string): void {
    if (id === undefined) this.cache.clear();
    else this.cache.delete(id);
  }

  /**
   * The card the SDK's transport checks a request against (protocol
   * version, streaming). Reads of Baton's own task view (GetTask, ListTasks,
   * CancelTask's answer) must work while the delegatee is down, so when its
   * card cannot be fetched the transport gets Baton's interfaces alone;
   * every send still resolves and verifies the delegatee's card first.
   */
  async forTransport(id: string): Promise<AgentCard> {
    try {
      return (await this.get(id)).internal;
    } catch {
      const base = `${this.deps.publicUrl()}/agents/${id}`;
      return AgentCard.fromJSON({
        name: `${id} (via Baton)`,
        description: 'The delegatee cannot be reached right now; Baton answers from its own records.',
        version: '1.0.0',
        supportedInterfaces: [
          { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
          { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        ],
        capabilities: { streaming: true, pushNotifications: this.deps.push === true },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [],
      });
    }
  }

  private async build(id: string): Promise<ProxyCard> {
    const remote = (await this.deps.delegatees.resolve(id)).verification.card as unknown as Json;
    const root = this.deps.publicUrl();
    const base = `${root}/agents/${id}`;
    const params: Rw003CardParams = {
      ...{}, ...this.deps.identity,
      agent_card_id: `${this.deps.identity.agent_card_id}_${id.replace(/-/g, '_')}`,
      display_name: `${this.deps.identity.display_name} for ${id}`.slice(0, 256),
      supported_adapters: [{ protocol: 'a2a', version: '1.0', binding: 'JSONRPC', endpoint_ref: `${base}/a2a/jsonrpc`, authentication_methods: ['api_key', 'bearer_jwt'] }],
    };
    // Only schema members at non-default values (served-card.ts): the SDK, Baton and plain JCS then agree on the payload.
    const card: Json = servableForm({
      name: `${String(remote.name)} (via Baton)`,
      description: `${String(remote.description ?? '')} Delegated through Baton: attenuated contracts, fenced admission, read-back verified outcomes.`.trim(),
      version: String(remote.version ?? '1.0.0'),
      supportedInterfaces: [
        { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        // A2A v0.3 clients, through the SDK's compatibility layer (same admission and read-back).
        { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
      ],
      capabilities: {
        streaming: true,
        pushNotifications: this.deps.push === true,
        extensions: [
          { uri: RW003_CARD_EXTENSION_URI, description: 'RW-003 card fields', params: params as unknown as JsonValue },
          // A Baton takes an upstream's chain in the request's metadata, kept out of the task's history (chain-placement.ts).
          { uri: CONTRACT_EXTENSION, description: 'Baton attaches the attenuated Delegation Contract chain for the delegatee', params: { ...REQUEST_PLACEMENT } },
        ],
      },
      securitySchemes: {
        apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
      },
      // Either credential; each names the role `a2a` (as Baton's own card does). An empty
      // scope list is the one value §8.4.1 canonicalisers disagree on (see served-card.ts).
      securityRequirements: [{ schemes: { apiKey: { list: ['a2a'] } } }, { schemes: { bearer: { list: ['a2a'] } } }],
      defaultInputModes: (remote.defaultInputModes as JsonValue) ?? ['text/plain'],
      defaultOutputModes: (remote.defaultOutputModes as JsonValue) ?? ['text/plain'],
      skills: skillsOf(remote.skills),
    });
    const { signed, doc, option } = await publishSigned(card, params, { keyring: this.deps.keyring, root, source: `${base}/.well-known/agent-card.json` });
    return { json: signed, doc, internal: AgentCard.fromJSON(signed), option };
  }
}

/** The value built for `key`, built once; a failed build is forgotten, so the next call tries again. */
export function builtOnce<V>(cache: Map<string, Promise<V>>, key: string, build: () => Promise<V>): Promise<V> {
  let c = cache.get(key);
  if (!c) {
    c = build().catch((err: unknown) => {
      cache.delete(key);
      throw err;
    });
    cache.set(key, c);
  }
  return c;
}

/**
 * A card Baton serves as itself (a delegatee's proxy card, an MCP endpoint's
 * card): checked servable, signed with Baton's current keys, with the
 * identity an upstream delegates to — this exact revision.
 */
export async function publishSigned(card: Json, params: Rw003CardParams, deps: { keyring: Keyring; root: string; source: string }): Promise<{ signed: Json; doc: PublishedDocument; option: DelegateeOption }> {
  assertServable(card);
  const signed = await signCard(card, deps.keyring.signingKeys(new Date()), { jku: `${deps.root}/.well-known/jwks.json` });
  const { signatures: _s, ...unsigned } = signed;
  const payloadDigest = sha256Digest(cardSigningBytes(unsigned));
  const option = delegateeOf(params, payloadDigest, deps.source);
  // ES256 signatures are randomised: a weak validator over the signed payload is stable across restarts and nodes.
  return { signed, doc: { ...{}, ...document(signed, new Date()), etag: `W/"${payloadDigest.slice(7, 39)}"` }, option };
}

/**
 * The remote's skills as Baton offers them: a skill's own security
 * requirements name the delegatee's schemes, not Baton's, so they are
 * dropped (Baton's card-level requirements apply at its door).
 */
function skillsOf(skills: JsonValue | undefined): JsonValue {
  if (!Array.isArray(skills)) return [];
  return skills.map((s) => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return s;
    const { securityRequirements: _theirs, ...rest } = s;
    return rest;
  });
}
