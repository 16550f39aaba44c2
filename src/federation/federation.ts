/**
 * Cross-organisation fencing (issue #16, DESIGN "Across organisations,
 * nothing is shared but keys and URLs"). Downstream side: before an effect
 * under an upstream's chain, fetch the upstream's signed control-head
 * statement, verify it under the pinned contract JWKS and turn it into remote
 * fence entries (src/federation/head-statement.ts); after read-back, fetch
 * again and compare. Upstream side: state the heads of every stream a
 * delegation it issued fences — its own streams from its store, and for a
 * chain it imported itself, its own upstream's heads, verified and vouched
 * for under its keys (three hops need no key of the first organisation at
 * the third). Consumption receipts (both sides) live here too: they need
 * the same chain split and pinned keys; their rules are in receipts.ts.
 */
import { readFile } from 'node:fs/promises';
import { credentialHeader } from '../gateway/credential.ts';
import { parseJwks, type KeySet } from '../cards/jwks.ts';
import { loadChain } from '../contracts/attestation-chain.ts';
import { parseContract, type DelegationContract } from '../contracts/model.ts';
import type { ControlScopeRef } from '../control/scope.ts';
import { contextInvalidated, deny, invalidRequest, isBatonError, unavailable } from '../errors.ts';
import type { Keyring } from '../keys/keyring.ts';
import { canonicalText } from '../records/canonical.ts';
import { refOf } from '../records/envelope.ts';
import { utc, type Clock } from '../records/time.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { Store } from '../store/port.ts';
import { HEAD_STATEMENT_TYPE, HeadStatement, remoteFenceHolds, remoteFenceOf, type HeadEntry, type RemoteFenceEntry } from './head-statement.ts';
import { signJws, verifyJws } from './jws.ts';
import type { ConsumptionEvidence } from './consumption.ts';
import type { AttemptBody } from '../attempts/record.ts';
import { localStreamScope, splitChain, type ChainSplit } from './scopes.ts';
import { settleByReceipt, signedConsumption, type ReceiptContext } from './receipts.ts';

export const HEADS_JWS_TYP = 'baton-control-heads+jws';
/** A control notice is a head statement pushed by the upstream when a head stops permitting. */
export const NOTICE_JWS_TYP = 'baton-control-notice+jws';
/** How old a received notice may be (a replayed one could only block, never permit, but stays bounded). */
const NOTICE_MAX_AGE_MS = 60_000;

/** An upstream this gateway accepts chains from, fenced through its head statements. */
export interface UpstreamLink {
  actorObjectId: string;
  contractJwksFile: string;
  headsUrl: string;
  /** Credential for the head-statement endpoint: its value is read from the environment, never from config. */
  auth?: { header: string; env: string; scheme?: string | undefined } | undefined;
  /** How old a statement may be when an effect is admitted (0: fetched for this effect). */
  maxStalenessMs: number;
  /** Organisations above it whose contracts it presents (three hops): their heads, too, come only through its statements. */
  ancestors?: readonly string[] | undefined;
}

/** A downstream gateway on its own store, told of control changes on delegations issued to it. */
export interface DownstreamLink {
  actorObjectId: string;
  /** Its control-notice endpoint (…/federation/v1/notify); without it, only CancelTask and its next fetch stop it. */
  notifyUrl?: string | undefined;
  /** Its contract JWKS, pinned: its consumption receipts verify under these keys only (without it, none is honoured). */
  contractJwksFile?: string | undefined;
}

export interface FederationDeps {
  store: Store;
  keyring: Keyring;
  clock: Clock;
  spaceId: string;
  /** This gateway's actor object id: the signer of its own contracts and statements. */
  self: string;
  upstreams: readonly UpstreamLink[];
  downstreams: readonly DownstreamLink[];
  /** Who appends a received notice on the local stream. */
  actorRef: ActorRef;
  /** The staleness this gateway allows its downstreams (stated in every statement). */
  servedStalenessMs: number;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** Hands a breaker a notice tripped to the operator (an escalation: visible, and resettable by them). */
  escalate?: (delegationId: string, reasons: string[]) => Promise<unknown>;
}

export class Federation {
  private readonly byActor: Map<string, UpstreamLink>;
  /** Issuers whose delegation streams live only in an upstream's store: every upstream and the organisations above it. */
  private readonly remoteIssuers: Set<string>;
  private readonly keys = new Map<string, Promise<KeySet>>();
  private readonly cache = new Map<string, HeadStatement>();

  constructor(private readonly deps: FederationDeps) {
    this.byActor = new Map(deps.upstreams.map((u) => [u.actorObjectId, u]));
    this.remoteIssuers = new Set(deps.upstreams.flatMap((u) => [u.actorObjectId, ...(u.ancestors ?? [])]));
  }

  /**
   * Is `actor` an organisation whose streams live only in its own store — an
   * upstream, or one above it (three hops: A's contracts at C have no stream
   * at C; their heads reach C only through B's statements, issue #25)?
   */
  isRemoteIssuer(actor: string): boolean {
    return this.remoteIssuers.has(actor);
  }

  /** The remote/local split of a chain imported from a federated upstream; undefined otherwise. */
  split(contracts: readonly DelegationContract[]): ChainSplit | undefined {
    const s = splitChain(contracts, this.deps.self, this.deps.spaceId);
    if (!s || !this.byActor.has(s.upstreamActor)) return undefined;
    const up = contracts[s.upstreamLeaf]!;
    // The imported leaf's local copy (its budget node's stream) is fenced here too.
    s.local.push({ space_id: up.body.owner.space_id, scope_kind: 'delegation', scope_id: up.record_id });
    return s;
  }

  /** Remote fence entries for an effect under `contracts`, from a verified, fresh statement. */
  async remoteFence(contracts: readonly DelegationContract[], split: ChainSplit): Promise<RemoteFenceEntry[]> {
    const up = this.byActor.get(split.upstreamActor)!;
    const subject = contracts[split.upstreamLeaf]!.record_id;
    const statement = await this.statement(up, subject);
    return remoteFenceOf(statement, { iss: up.actorObjectId, aud: this.deps.self, subject, required: split.remote, now: this.deps.clock.now(), maxStalenessMs: up.maxStalenessMs });
  }

  /** Post-effect recheck (RW-003 §1.2): a fresh statement whose heads still equal the bound ones. */
  async stillHolds(bound: readonly RemoteFenceEntry[], subject: string): Promise<boolean> {
    const up = bound[0] && this.byActor.get(bound[0].upstream);
    if (!up) return bound.length === 0;
    try {
      this.cache.delete(subject);
      return remoteFenceHolds(bound, await this.statement(up, subject));
    } catch (err) {
      if (isBatonError(err)) return false;
      throw err;
    }
  }

  /** A received control notification: forget any cached statement so the next effect fetches. */
  forget(subject: string): void {
    this.cache.delete(subject);
  }

  /**
   * Upstream side: the signed statement for `leafId`, which this gateway
   * issued to `downstream`. Anything else is refused without saying whether
   * the delegation exists.
   */
  async statementFor(downstream: string, leafId: string): Promise<string> {
    const record = await this.deps.store.getRecord(leafId);
    const leaf = record ? parseContract(record) : undefined;
    if (!leaf || leaf.issued_by_actor_ref.object_id !== this.deps.self || leaf.body.delegatee_agent_ref.actor_ref.object_id !== downstream) {
      throw invalidRequest('no delegation issued to this gateway under that id');
    }
    const contracts = (await loadChain(this.deps.store, refOf(leaf))).map((r) => parseContract(r));
    const split = this.split(contracts);
    const remote = new Map<string, HeadEntry>();
    if (split) {
      const up = this.byActor.get(split.upstreamActor)!;
      const s = await this.statement(up, contracts[split.upstreamLeaf]!.record_id, true);
      for (const h of s.heads) remote.set(canonicalText(h.scope), h);
    }
    const heads: HeadEntry[] = [];
    for (const scope of leaf.body.control_scopes as ControlScopeRef[]) {
      heads.push(remote.get(canonicalText(scope)) ?? (await this.localHead(scope)));
    }
    const payload: HeadStatement = {
      typ: HEAD_STATEMENT_TYPE,
      iss: this.deps.self,
      aud: downstream,
      subject: leafId,
      issued_at: utc(this.deps.clock.now()),
      max_staleness_ms: this.deps.servedStalenessMs,
      heads,
    };
    return signJws(this.deps.keyring, HEADS_JWS_TYP, payload);
  }

  /**
   * Upstream side (issue #16 "Revocation reaches B"): a delegation this
   * gateway issued to a separate-store downstream stopped permitting while
   * attempts under it are open: push the signed heads to the downstream's
   * notice endpoint, so it blocks new effects before its next fetch.
   * Returns false when no notice endpoint is configured for that downstream.
   */
  async notifyDownstream(leafId: string): Promise<boolean> {
    const record = await this.deps.store.getRecord(leafId);
    const leaf = record ? parseContract(record) : undefined;
    if (!leaf || leaf.issued_by_actor_ref.object_id !== this.deps.self) return false;
    const down = this.deps.downstreams.find((d) => d.actorObjectId === leaf.body.delegatee_agent_ref.actor_ref.object_id);
    if (!down?.notifyUrl) return false;
    const statement = JSON.parse(Buffer.from((await this.statementFor(down.actorObjectId, leafId)).split('.')[1]!, 'base64url').toString('utf8')) as HeadStatement;
    const jws = await signJws(this.deps.keyring, NOTICE_JWS_TYP, statement);
    const res = await (this.deps.fetch ?? fetch)(down.notifyUrl, { method: 'POST', headers: { 'content-type': 'application/jose' }, body: jws, signal: AbortSignal.timeout(this.deps.timeoutMs), redirect: 'error' });
    await res.body?.cancel();
    if (!res.ok) throw unavailable('downstream did not accept the control notice', { status: res.status });
    return true;
  }

  /**
   * Downstream side: a notice from an upstream, verified under its pinned
   * keys. Every stated head that no longer permits trips the breaker on this
   * store's copy of the delegation stream: the local fence of every new
   * admission and the revocation sweep of running ones see it at once.
   * Returns how many streams were tripped.
   */
  async receiveNotice(jws: string): Promise<number> {
    const claimed = peekIssuer(jws);
    const up = claimed ? this.byActor.get(claimed) : undefined;
    if (!up) throw contextInvalidated('control notice from an unknown upstream', { reason: 'unknown_issuer' });
    const parsed = HeadStatement.safeParse(await verifyJws(jws, await this.keysOf(up), NOTICE_JWS_TYP, this.deps.clock.now()));
    if (!parsed.success) throw contextInvalidated('control notice is malformed', { reason: 'malformed' });
    const n = parsed.data;
    const age = this.deps.clock.now().getTime() - Date.parse(n.issued_at);
    if (n.iss !== up.actorObjectId || n.aud !== this.deps.self || age > NOTICE_MAX_AGE_MS) throw contextInvalidated('control notice is stale or addressed elsewhere', { reason: 'stale' });
    const scope = await this.issuedBy(up.actorObjectId, n.subject);
    this.cache.delete(n.subject);
    const blocked = n.heads.filter((h) => h.state !== 'active');
    if (blocked.length === 0) return 0;
    const first = blocked[0]!;
    // Already blocked here (tripped, revoked, suspended): nothing to trip, nothing new to escalate — but passed on below.
    const before = await this.deps.store.control.head(scope);
    const trip = before?.state === 'active';
    if (trip) {
      const reason = `upstream ${up.actorObjectId}: ${first.scope.scope_kind} ${first.state}`.slice(0, 2048);
      const event = await this.deps.store.control.appendControl({
        event_type: 'rw003.circuit_breaker.tripped',
        control_scope_ref: scope,
        actor_ref: this.deps.actorRef,
        idempotency_key: `notice:${n.subject}:${first.boundary?.event_id ?? first.state}:${before.position}`,
        payload: { action: 'trip', trigger: 'revocation', reason },
      });
      // Every trip is the operator's to see and, once the upstream's delegation is usable again, to reset (issue 25 item 13).
      await this.deps.escalate?.(n.subject, [`control notice from upstream ${up.actorObjectId}`, reason, `tripped at position ${event.position}; reset with: baton breaker reset delegation:${n.subject}`]);
    }
    // Further down (three hops): the children this gateway issued under it hear it now, not only when a sweep stops an attempt.
    const tree = await this.deps.store.ledger.tree(n.subject);
    for (const child of tree?.children ?? []) await this.notifyDownstream(child.node_id).catch(() => false);
    return trip ? 1 : 0;
  }

  /**
   * The local stream of a delegation `upstream` issued to this gateway and
   * this gateway imported as a root of its ledger. A notice naming anything
   * else — this gateway's own delegations, another organisation's, one it
   * never imported — is refused alike, without saying which (issue 25 item 13).
   */
  private async issuedBy(upstream: string, subject: string): Promise<ControlScopeRef> {
    const record = await this.deps.store.getRecord(subject);
    const contract = record ? parseContract(record) : undefined;
    const node = contract ? await this.deps.store.ledger.node(subject) : undefined;
    const ours = contract?.issued_by_actor_ref.object_id === upstream && contract.body.delegatee_agent_ref.actor_ref.object_id === this.deps.self;
    if (!ours || !node || node.parent_id !== null) throw deny('the notice names no delegation this upstream issued to this gateway');
    return { space_id: node.space_id, scope_kind: 'delegation', scope_id: subject };
  }

  /** Downstream side: the signed consumption receipt of a closed task under an imported chain (src/federation/receipts.ts). */
  consumptionReceipt(attempt: AttemptBody): Promise<string | undefined> {
    return signedConsumption(this.receipts(), attempt);
  }

  /** Upstream side: the settlement of one effect by its downstream's receipt (src/federation/receipts.ts). */
  settleFromReceipt(attempt: AttemptBody, remoteTaskId: string | undefined, jws: unknown, reserved: Readonly<Record<string, string>>): Promise<ConsumptionEvidence | undefined> {
    return settleByReceipt(this.receipts(), attempt, remoteTaskId, jws, reserved);
  }

  private receipts(): ReceiptContext {
    return { ...{}, ...this.deps, hasUpstreams: this.byActor.size > 0, split: (c) => this.split(c), jwksAt: (f) => this.jwksAt(f) };
  }

  private async localHead(scope: ControlScopeRef): Promise<HeadEntry> {
    const h = await this.deps.store.control.head(localStreamScope(scope, this.deps.spaceId));
    if (!h) return { scope, boundary: null, state: 'unresolved' };
    const { project_id, branch_id, position, event_id, event_digest } = h;
    return { scope, boundary: { project_id, branch_id, position, event_id, event_digest }, state: h.state };
  }

  /** A verified statement about `subject`: cached only within the configured staleness. */
  private async statement(up: UpstreamLink, subject: string, fresh = false): Promise<HeadStatement> {
    const cached = this.cache.get(subject);
    const now = this.deps.clock.now().getTime();
    if (!fresh && cached && up.maxStalenessMs > 0 && now - Date.parse(cached.issued_at) <= up.maxStalenessMs) return cached;
    const jws = await this.fetchStatement(up, subject);
    const parsed = HeadStatement.safeParse(await verifyJws(jws, await this.keysOf(up), HEADS_JWS_TYP, this.deps.clock.now()));
    if (!parsed.success) throw contextInvalidated('upstream head statement is malformed', { reason: 'malformed' });
    if (up.maxStalenessMs > 0) this.cache.set(subject, parsed.data);
    return parsed.data;
  }

  private async fetchStatement(up: UpstreamLink, subject: string): Promise<string> {
    const headers: Record<string, string> = { accept: 'application/jose' };
    if (up.auth) {
      const credential = credentialHeader(up.auth);
      if (!credential) throw unavailable('upstream credential is not set in the environment', { env: up.auth.env, before_transmission: true });
      Object.assign(headers, credential);
    }
    const url = `${up.headsUrl.replace(/\/+$/, '')}/${encodeURIComponent(subject)}`;
    let res: Response;
    try {
      res = await (this.deps.fetch ?? fetch)(url, { headers, signal: AbortSignal.timeout(this.deps.timeoutMs), redirect: 'error' });
    } catch (err) {
      throw unavailable('upstream control heads are unavailable', { upstream: up.actorObjectId, before_transmission: true }, err);
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) throw unavailable('upstream refused to state its control heads', { upstream: up.actorObjectId, status: res.status, before_transmission: true });
    if (text.length > 128 * 1024) throw contextInvalidated('upstream head statement is oversize', { reason: 'malformed' });
    return text.trim();
  }

  private keysOf(up: UpstreamLink): Promise<KeySet> {
    return this.jwksAt(up.contractJwksFile);
  }

  private jwksAt(file: string): Promise<KeySet> {
    let k = this.keys.get(file);
    if (!k) {
      k = readFile(file).then((b) => parseJwks(b));
      k.catch(() => this.keys.delete(file));
      this.keys.set(file, k);
    }
    return k;
  }
}

/** The `iss` a compact JWS claims, read only to choose which pinned keys verify it. */
function peekIssuer(jws: string): string | undefined {
  try {
    const iss = (JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iss?: unknown }).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}
