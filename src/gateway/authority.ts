/**
 * Where a forwarded call's authority comes from and how it narrows
 * (ADR-0014 "Decision", "Delegation only narrows"). Per task: a root
 * contract issued to Baton from the caller's owner preset, then a child
 * minted for the delegatee that is a provable subset of it. Each contract
 * and its budget node commit together (ledger.openBudget stores the record
 * and appends rw003.delegation.issued in one transaction).
 */
import { evaluateChain, type EvaluatedChain, type OperationRequest } from '../contracts/admission.ts';
import { loadChain, verifyChain, type AuthorityHeads } from '../contracts/attestation-chain.ts';
import { issueContract, type TrustedCaller } from '../contracts/issuance.ts';
import { mintChild } from '../contracts/mint.ts';
import { parseContract, type DelegationContract, type OwnerBinding } from '../contracts/model.ts';
import type { DelegateeOption, Preset } from '../contracts/presets.ts';
import { defaultScopeRegistry } from '../contracts/scope.ts';
import type { ContractSigner, ResolveSignerKey } from '../contracts/signing.ts';
import { invalidRequest } from '../errors.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { Envelope } from '../records/envelope.ts';
import { refOf } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import { sameRevision, type ActorRef, type RevisionRef } from '../records/revision-ref.ts';
import { readFile } from 'node:fs/promises';
import { parseJwks } from '../cards/jwks.ts';
import { utc, type Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import type { Caller } from './callers.ts';

export interface AuthorityDeps {
  store: Store;
  keyring: Keyring;
  clock: Clock;
  ids: IdSource;
  owner: OwnerBinding;
  /** Baton's own identity: every root's delegatee and every child's delegator. */
  gateway: DelegateeOption;
  presets: ReadonlyMap<string, Readonly<Preset>>;
}

export interface TaskAuthority {
  /** Root first; the last one is the child minted for the delegatee. */
  contracts: DelegationContract[];
  /**
   * Re-verifies every ancestor now under the right keys, optionally against
   * one operation. Callers evaluate once, right before admission, rather than
   * here as well: verification is the costly part (one signature per hop).
   */
  reevaluate(op?: OperationRequest): Promise<EvaluatedChain>;
}

export class DelegationAuthority {
  /** Roots issued by this process that still hold preset capacity: root id → preset and time. */
  private readonly live = new Map<string, { presetId: string; at: number }>();
  /** Issuance instants per preset, for the per-minute rate. */
  private readonly issuedAt = new Map<string, number[]>();

  constructor(private readonly deps: AuthorityDeps) {}

  /** Heads from the control plane: the stored revision plus its stream's projected state. */
  readonly heads: AuthorityHeads = {
    head: async (delegationId) => {
      const record = await this.deps.store.getRecord(delegationId);
      if (!record) return undefined;
      const head = await this.deps.store.control.head({ space_id: this.deps.owner.space_id, scope_kind: 'delegation', scope_id: delegationId });
      const state = head?.state;
      const status = state === 'active' ? 'active' : state === 'suspended' || state === 'tripped' ? 'suspended' : state === 'expired' ? 'expired' : 'revoked';
      return { ref: refOf(record), status };
    },
  };

  readonly resolveSignerKey: ResolveSignerKey = async (kid, issuer) =>
    sameRevision(issuer, this.deps.gateway.actor_ref) ? this.deps.keyring.all().find((k) => k.kid === kid)?.publicKey : undefined;

  /** Issues the root from the caller's preset and mints the child for `delegatee`. */
  async open(caller: Caller, delegatee: DelegateeOption, objectiveText: string): Promise<TaskAuthority> {
    const preset = caller.preset === undefined ? undefined : this.deps.presets.get(caller.preset);
    if (!preset) throw invalidRequest('this caller has no issuance preset configured', { caller: caller.id });
    const objective = { text: objectiveText.slice(0, 2000) || 'A2A task', type: preset.objective_types[0]! };
    const trusted: TrustedCaller = { actor: caller.actor, subject: { subject_id: caller.id, kind: 'authenticated' } };
    const signer = this.signer();
    const { contract: root } = await issueContract(
      { delegatee_card_ref: this.deps.gateway.card_ref, objective, input_revisions: [] },
      trusted,
      { path: 'owner_preset', preset },
      { clock: this.deps.clock, ids: this.deps.ids, signer, owner: this.deps.owner, registry: defaultScopeRegistry, issuanceCounters: this.counters() },
    );
    await this.openBudget(root);
    this.noteIssued(preset.preset_id, root.record_id);
    const rootChain = await this.evaluate([root]);
    const { contract: child } = await mintChild(
      rootChain,
      { delegatee, objective, input_revisions: [] },
      this.deps.gateway.actor_ref,
      { clock: this.deps.clock, ids: this.deps.ids, signer, registry: defaultScopeRegistry, countDescendants: async (r) => this.descendants(r.object_id) },
    );
    await this.openBudget(child);
    const contracts = [root, child];
    return { contracts, reevaluate: (op) => this.evaluate(contracts, op) };
  }

  /**
   * An upstream gateway's request: its contract chain is the authority (ADR-0014
   * "existing task authority"), never a preset. Every contract must verify
   * under the upstream's pinned keys, its leaf must name this gateway's exact
   * card and actor as delegatee, and the child Baton mints extends it — one
   * more hop, narrower on every dimension, inside the same root budget.
   */
  async adopt(caller: Caller, records: readonly unknown[], self: DelegateeOption, delegatee: DelegateeOption, objectiveText: string): Promise<TaskAuthority> {
    if (!caller.upstream) throw invalidRequest('this caller may not present delegation chains');
    if (records.length === 0 || records.length > 5) throw invalidRequest('delegation chain must hold 1 to 5 contracts');
    const contracts = records.map((r) => parseContract(r));
    const resolveSignerKey = await this.upstreamKeys(caller.upstream);
    // Signatures, order and attenuation first: nothing unverified is ever stored.
    await verifyChain(contracts, { clock: this.deps.clock, resolveSignerKey });
    // Then import: each contract and its budget node commit together, idempotently by content.
    for (const c of contracts) await this.openBudget(c, caller.actor);
    const chain = await evaluateChain(contracts, { clock: this.deps.clock, resolveSignerKey, heads: this.heads });
    const leaf = chain.leaf.body.delegatee_agent_ref;
    if (!sameRevision(leaf.card_ref, self.card_ref) || !sameRevision(leaf.actor_ref, self.actor_ref)) {
      throw invalidRequest('the presented chain does not delegate to this gateway', { expected_card: self.card_ref.object_id });
    }
    const objective = { text: objectiveText.slice(0, 2000) || 'A2A task', type: chain.leaf.body.objective.type };
    const { contract: child } = await mintChild(
      chain,
      { delegatee, objective, input_revisions: [] },
      self.actor_ref,
      { clock: this.deps.clock, ids: this.deps.ids, signer: this.signer(self.actor_ref), registry: defaultScopeRegistry, countDescendants: async (r) => this.descendants(r.object_id) },
    );
    await this.openBudget(child);
    const all = [...contracts, child];
    const reevaluate = (op?: OperationRequest) => evaluateChain(all, { clock: this.deps.clock, resolveSignerKey: this.either(resolveSignerKey), heads: this.heads }, op);
    return { contracts: all, reevaluate };
  }

  /** The stored chain ending at `leaf`, re-verified under the keys this caller's chain needs. */
  async resume(caller: Caller, leaf: RevisionRef): Promise<TaskAuthority> {
    const contracts = (await loadChain(this.deps.store, leaf)).map((r) => parseContract(r));
    const keys = caller.upstream ? this.either(await this.upstreamKeys(caller.upstream)) : this.resolveSignerKey;
    const reevaluate = (op?: OperationRequest) => evaluateChain(contracts, { clock: this.deps.clock, resolveSignerKey: keys, heads: this.heads }, op);
    return { contracts, reevaluate };
  }

  private readonly upstreamCache = new Map<string, Promise<ResolveSignerKey>>();

  /** Keys that may sign an upstream's contracts: its pinned JWKS, bound to its actor. */
  private upstreamKeys(up: NonNullable<Caller['upstream']>): Promise<ResolveSignerKey> {
    let r = this.upstreamCache.get(up.contractJwksFile);
    if (!r) {
      r = (async () => {
        const set = await parseJwks(await readFile(up.contractJwksFile));
        return async (kid, issuer) => (issuer.object_id === up.actorObjectId ? set.keys.get(kid)?.key : undefined);
      })();
      this.upstreamCache.set(up.contractJwksFile, r);
    }
    return r;
  }

  /** Upstream keys for upstream contracts, Baton's own for the child it minted. */
  private either(upstream: ResolveSignerKey): ResolveSignerKey {
    return async (kid, issuer) => (await upstream(kid, issuer)) ?? this.resolveSignerKey(kid, issuer);
  }

  /** Re-verifies every ancestor now, optionally against one operation (ADR-0014: at admission, not only at mint). */
  async evaluate(contracts: readonly DelegationContract[], op?: OperationRequest): Promise<EvaluatedChain> {
    return evaluateChain(contracts, { clock: this.deps.clock, resolveSignerKey: this.resolveSignerKey, heads: this.heads }, op);
  }

  /** The operation request a forwarded A2A call is checked as. */
  operation(name: string, effect: 'read' | 'proposal' | 'reversible_mutation'): OperationRequest {
    return { operation: name, resource: { kind: 'project', project_id: this.deps.owner.space_id }, effect_class: effect, data_class: 'internal' };
  }

  private async openBudget(contract: DelegationContract, announcer: ActorRef = this.deps.gateway.actor_ref): Promise<void> {
    const { lineage, budget_ceilings, limits, owner } = contract.body;
    await this.deps.store.ledger.openBudget({
      node_id: contract.record_id,
      ...(lineage.kind === 'child' ? { parent_id: lineage.parent_ref.object_id } : {}),
      space_id: owner.space_id,
      owner_namespace: owner.namespace,
      not_after: limits.not_after,
      dimensions: budget_ceilings.map((b) => ({ name: b.name, unit: b.unit, ceiling: BigInt(b.ceiling) })),
      actor_ref: announcer,
      record: contract as unknown as Envelope,
      at: utc(this.deps.clock.now()),
    });
  }

  private async descendants(rootId: string): Promise<number> {
    const tree = await this.deps.store.ledger.tree(rootId);
    const count = (n: { children: unknown[] } | undefined): number =>
      n ? n.children.reduce<number>((a, c) => a + 1 + count(c as { children: unknown[] }), 0) : 0;
    return count(tree);
  }

  private signer(actorRef: ActorRef = this.deps.gateway.actor_ref): ContractSigner {
    const k = this.deps.keyring.current('ES256');
    return { actorRef, kid: k.kid, alg: 'ES256', key: k.privateKey };
  }

  /**
   * A root stops holding its preset's capacity once its work is settled
   * (the dispatcher calls this); unresolved work keeps holding it.
   */
  release(rootId: string): void {
    this.live.delete(rootId);
  }

  // Process-local issuance counters (ADR-0014 preset limits on active roots and
  // creation rate). The durable bound across processes is the ledger's
  // per-namespace active-root limit, checked inside openBudget.
  private counters() {
    return {
      activeRoots: async (presetId: string) => this.liveRoots(presetId),
      issuedSince: async (presetId: string, since: Date) => (this.issuedAt.get(presetId) ?? []).filter((t) => t >= since.getTime()).length,
    };
  }

  private liveRoots(presetId: string): number {
    const lifetimeMs = (this.deps.presets.get(presetId)?.terms.limits.lifetime_seconds ?? 3600) * 1000;
    const horizon = this.deps.clock.now().getTime() - lifetimeMs;
    let n = 0;
    for (const [id, r] of this.live) {
      if (r.at <= horizon) this.live.delete(id); // expired roots hold nothing
      else if (r.presetId === presetId) n++;
    }
    return n;
  }

  private noteIssued(presetId: string, rootId: string): void {
    const now = this.deps.clock.now().getTime();
    this.live.set(rootId, { presetId, at: now });
    const recent = (this.issuedAt.get(presetId) ?? []).filter((t) => t > now - 60_000);
    recent.push(now);
    this.issuedAt.set(presetId, recent);
  }
}

