/**
 * Where a forwarded call's authority comes from and how it narrows
 * (ADR-0014 "Decision", "Delegation only narrows"). Per task: a root
 * contract issued to Baton from the caller's owner preset, then a child
 * minted for the delegatee that is a provable subset of it. Nothing is
 * stored here: each contract, its budget node and its issued event commit in
 * the effect's admission transaction (src/gateway/path/admit.ts), so a
 * refused admission leaves no root, child or preset capacity behind.
 *
 * (Just over 300 lines: opening, adopting and resuming a chain share the
 * heads, signer and upstream keys kept here; federation hooks still land in it.)
 */
import { evaluateChain, type EvaluatedChain, type OperationRequest } from '../contracts/admission.ts';
import { loadChain, type AuthorityHeads } from '../contracts/attestation-chain.ts';
import { issueContract, type TrustedCaller } from '../contracts/issuance.ts';
import { mintChild } from '../contracts/mint.ts';
import { parseContract, type DelegationContract, type OwnerBinding } from '../contracts/model.ts';
import type { DelegateeOption, Preset } from '../contracts/presets.ts';
import { defaultScopeRegistry, type ScopeRegistry } from '../contracts/scope.ts';
import type { ContractSigner, ResolveSignerKey } from '../contracts/signing.ts';
import type { TermsRequest } from '../contracts/terms.ts';
import { invalidRequest } from '../errors.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { Envelope } from '../records/envelope.ts';
import { refOf } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import { sameRevision, type ActorRef, type RevisionRef } from '../records/revision-ref.ts';
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseJwks, type KeySet } from '../cards/jwks.ts';
import { utc, type Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import type { OpenBudgetRequest, PresetIssuance } from '../ledger/types.ts';
import type { Federation } from '../federation/federation.ts';
import type { Caller } from './callers.ts';
import { localBounds } from '../federation/import-bounds.ts';

/**
 * Issuance counters handed to the contract issuer: the preset's limits are
 * enforced durably by the admission transaction that stores the root
 * (ADR-0014; process memory is never authority), so nothing is counted here.
 */
const DURABLE_COUNTERS = { activeRoots: async () => 0, issuedSince: async () => 0 };

export interface AuthorityDeps {
  store: Store;
  keyring: Keyring;
  clock: Clock;
  ids: IdSource;
  owner: OwnerBinding;
  /** Baton's own identity: every root's delegatee and every child's delegator. */
  gateway: DelegateeOption;
  presets: ReadonlyMap<string, Readonly<Preset>>;
  /** Separate-store upstreams (issue #16): their streams are fenced remotely, not in this store. */
  federation?: Pick<Federation, 'isRemoteIssuer' | 'split'>;
  /** Operations and tools a scope may name (default: A2A's operations, no tools; src/mcp adds its tools). */
  registry?: ScopeRegistry;
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

/**
 * Authority for a new task, minted but not yet stored: the admission stores
 * every budget node in its own transaction (ADR-0014: a delegation record and
 * its budget commit together; a refused admission leaves nothing live).
 */
export interface PreparedAuthority extends TaskAuthority {
  /** The nodes to open with the admission, root first; existing ones are found idempotently. */
  budgets: OpenBudgetRequest[];
  /** Upstream ancestors stored as records only (separate stores: their budgets are the upstream's). */
  imported?: DelegationContract[];
  /**
   * Set when this preparation minted a fresh imported child: if its admission
   * lost the race to a concurrent first import of the same upstream leaf, the
   * winner's child is stored now, and this prepares again on it (undefined:
   * no winner's child, the refusal stands).
   */
  retryImport?: () => Promise<PreparedAuthority | undefined>;
}

export class DelegationAuthority {
  constructor(private deps: AuthorityDeps) {}

  private get registry(): ScopeRegistry {
    return this.deps.registry ?? defaultScopeRegistry;
  }

  /**
   * A reload's presets: roots minted from now on name the new config revision. The
   * binding is replaced, never edited: the old one is shared by (frozen) sealed records.
   */
  reviseOwner(config_revision: string): void {
    this.deps = { ...{}, ...this.deps, owner: { ...{}, ...this.deps.owner, config_revision } };
  }

  /**
   * Heads from the control plane: the stored revision plus its stream's
   * projected state. A contract minted for an admission still in flight has
   * no stream yet; it counts as active only while it is exactly the pending
   * revision (its issuing transaction creates the stream).
   */
  headsWith(pending: readonly DelegationContract[] = [], fresh: readonly DelegationContract[] = []): AuthorityHeads {
    return {
      head: async (delegationId) => {
        // Minted by this gateway just now under a fresh random id, not yet admitted: nothing stored can name it.
        const f = fresh.find((c) => c.record_id === delegationId);
        if (f) return { ref: refOf(f), status: 'active' };
        const record = await this.deps.store.getRecord(delegationId);
        if (!record) {
          const p = pending.find((c) => c.record_id === delegationId);
          return p ? { ref: refOf(p), status: 'active' } : undefined;
        }
        const contract = parseContract(record);
        const head = await this.deps.store.control.head({ space_id: contract.body.owner.space_id, scope_kind: 'delegation', scope_id: delegationId });
        // A separate-store upstream's delegation has no stream here: its head is fenced
        // through the upstream's signed statement at admission (src/federation/).
        if (!head && this.deps.federation?.isRemoteIssuer(contract.issued_by_actor_ref.object_id)) return { ref: refOf(record), status: 'active' };
        const state = head?.state;
        const status = state === 'active' ? 'active' : state === 'suspended' || state === 'tripped' ? 'suspended' : state === 'expired' ? 'expired' : 'revoked';
        return { ref: refOf(record), status };
      },
    };
  }

  readonly heads: AuthorityHeads = this.headsWith();

  readonly resolveSignerKey: ResolveSignerKey = async (kid, issuer) =>
    sameRevision(issuer, this.deps.gateway.actor_ref) ? this.deps.keyring.all().find((k) => k.kid === kid)?.publicKey : undefined;

  /**
   * Issues the root from the caller's preset and mints the child for `delegatee`; nothing is stored.
   * `childTerms` narrows the child below the root (an MCP call: the one tool it calls).
   */
  async prepareOpen(caller: Caller, delegatee: DelegateeOption, objectiveText: string, childTerms?: TermsRequest): Promise<PreparedAuthority> {
    const preset = caller.preset === undefined ? undefined : this.deps.presets.get(caller.preset);
    if (!preset) throw invalidRequest('this caller has no issuance preset configured', { caller: caller.id });
    const objective = { text: objectiveText.slice(0, 2000) || 'A2A task', type: preset.objective_types[0]! };
    const trusted: TrustedCaller = { actor: caller.actor, subject: { subject_id: caller.id, kind: 'authenticated' } };
    const signer = this.signer();
    const { contract: root } = await issueContract(
      { delegatee_card_ref: this.deps.gateway.card_ref, objective, input_revisions: [] },
      trusted,
      { path: 'owner_preset', preset },
      // The preset's limits are counted by the admission transaction, in the store (ledger checkPreset).
      { clock: this.deps.clock, ids: this.deps.ids, signer, owner: this.deps.owner, registry: this.registry, issuanceCounters: DURABLE_COUNTERS },
    );
    const rootChain = await evaluateChain([root], { clock: this.deps.clock, resolveSignerKey: this.resolveSignerKey, heads: this.headsWith([root], [root]) });
    const { contract: child } = await mintChild(
      rootChain,
      { delegatee, objective, input_revisions: [], ...(childTerms ? { terms: childTerms } : {}) },
      this.deps.gateway.actor_ref,
      { clock: this.deps.clock, ids: this.deps.ids, signer, registry: this.registry, countDescendants: async () => 0 },
    );
    const contracts = [root, child];
    const issuance = { preset_id: preset.preset_id, max_active_roots: preset.issuance.max_active_roots, max_per_minute: preset.issuance.max_per_minute };
    return {
      contracts,
      budgets: [this.budgetOf(root, this.deps.gateway.actor_ref, issuance), this.budgetOf(child)],
      reevaluate: (op) => evaluateChain(contracts, { clock: this.deps.clock, resolveSignerKey: this.resolveSignerKey, heads: this.headsWith(contracts, contracts) }, op),
    };
  }

  /**
   * An upstream gateway's request: its contract chain is the authority (ADR-0014
   * "existing task authority"), never a preset. Every contract must verify
   * under the upstream's pinned keys, its leaf must name this gateway's exact
   * card and actor as delegatee, and the child Baton mints extends it — one
   * more hop, narrower on every dimension, inside the same root budget.
   * Nothing is stored here: the admission imports the chain with its budgets.
   */
  async prepareAdopt(caller: Caller, records: readonly unknown[], self: DelegateeOption, delegatee: DelegateeOption, objectiveText: string): Promise<PreparedAuthority> {
    if (!caller.upstream) throw invalidRequest('this caller may not present delegation chains');
    if (records.length === 0 || records.length > 5) throw invalidRequest('delegation chain must hold 1 to 5 contracts');
    const contracts = records.map((r) => parseContract(r));
    const resolveSignerKey = await this.upstreamKeys(caller.upstream);
    // Signatures, order, attenuation and heads first: nothing unverified is ever stored.
    const chain = await evaluateChain(contracts, { clock: this.deps.clock, resolveSignerKey, heads: this.headsWith(contracts) });
    const leaf = chain.leaf.body.delegatee_agent_ref;
    if (!sameRevision(leaf.card_ref, self.card_ref) || !sameRevision(leaf.actor_ref, self.actor_ref)) {
      throw invalidRequest('the presented chain does not delegate to this gateway', { expected_card: self.card_ref.object_id });
    }
    const objective = { text: objectiveText.slice(0, 2000) || 'A2A task', type: chain.leaf.body.objective.type };
    const split = this.deps.federation?.split(contracts);
    // Separate stores: the imported leaf is this ledger's root, so its ceilings (never the upstream root's) bound every effect here,
    // clamped to this gateway's own bounds for that upstream (issue 25 item 14).
    const local = split ? await localBounds(this.deps, caller, contracts, contracts[split.upstreamLeaf]!) : undefined;
    const rootId = split ? contracts[split.upstreamLeaf]!.record_id : contracts[0]!.record_id;
    // Idempotent import (issue #16): the child for one upstream leaf revision and one delegatee has one id,
    // so a retried request reuses it, and a concurrent duplicate cannot open a second one (its node conflicts).
    const childId = importedChildId(chain.leaf, self.actor_ref.object_id, delegatee.card_ref.object_id);
    const stored = await this.deps.store.getRecord(childId);
    const child = stored
      ? parseContract(stored)
      : (
          await mintChild(
            chain,
            { delegatee, objective, input_revisions: [], ...(local ? { terms: local.terms } : {}) },
            self.actor_ref,
            { clock: this.deps.clock, ids: { next: (p) => (p === 'dlg' ? childId : this.deps.ids.next(p)) }, signer: this.signer(self.actor_ref), registry: this.registry, countDescendants: async () => this.descendants(rootId) },
          )
        ).contract;
    const all = [...contracts, child];
    const keys = this.either(resolveSignerKey);
    const budgets = local
      ? [{ ...{}, ...this.importedRoot(contracts[split!.upstreamLeaf]!, caller.actor), ...local.root }, { ...{}, ...this.budgetOf(child), owner_namespace: local.root.owner_namespace }]
      : [...contracts.map((c) => this.budgetOf(c, caller.actor)), this.budgetOf(child)];
    return {
      contracts: all,
      budgets,
      ...(split ? { imported: contracts.slice(0, split.upstreamLeaf) } : {}),
      reevaluate: (op?: OperationRequest) => evaluateChain(all, { clock: this.deps.clock, resolveSignerKey: keys, heads: this.headsWith(all) }, inSpaceOf(all, op)),
      ...(stored ? {} : { retryImport: async () => ((await this.deps.store.getRecord(childId)) ? this.prepareAdopt(caller, records, self, delegatee, objectiveText) : undefined) }),
    };
  }

  /** The stored chain ending at `leaf`, re-verified under the keys this caller's chain needs. */
  async resume(caller: Caller, leaf: RevisionRef): Promise<TaskAuthority> {
    const contracts = (await loadChain(this.deps.store, leaf)).map((r) => parseContract(r));
    const keys = caller.upstream ? this.either(await this.upstreamKeys(caller.upstream)) : this.resolveSignerKey;
    const reevaluate = (op?: OperationRequest) => evaluateChain(contracts, { clock: this.deps.clock, resolveSignerKey: keys, heads: this.heads }, inSpaceOf(contracts, op));
    return { contracts, reevaluate };
  }

  private readonly upstreamCache = new Map<string, Promise<ResolveSignerKey>>();

  /** A reload re-reads upstreams' pinned contract JWKS on next use. */
  forgetUpstreamKeys(): void {
    this.upstreamCache.clear();
  }

  /** Keys that may sign an upstream's contracts: its pinned JWKS, bound to its actor. */
  private upstreamKeys(up: NonNullable<Caller['upstream']>): Promise<ResolveSignerKey> {
    let r = this.upstreamCache.get(up.contractJwksFile);
    if (!r) {
      r = (async () => {
        const sets = new Map<string, KeySet>();
        for (const p of [up, ...(up.ancestors ?? [])]) sets.set(p.actorObjectId, await parseJwks(await readFile(p.contractJwksFile)));
        return pinnedSignerKeys(sets);
      })();
      r.catch(() => this.upstreamCache.delete(up.contractJwksFile));
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

  /** The budget node a contract accounts for (opened, idempotently by content, by the admission transaction). */
  budgetOf(contract: DelegationContract, announcer: ActorRef = this.deps.gateway.actor_ref, preset?: PresetIssuance): OpenBudgetRequest {
    const { lineage, budget_ceilings, limits, owner } = contract.body;
    return {
      node_id: contract.record_id,
      ...(lineage.kind === 'child' ? { parent_id: lineage.parent_ref.object_id } : {}),
      space_id: owner.space_id,
      owner_namespace: owner.namespace,
      not_after: limits.not_after,
      dimensions: budget_ceilings.map((b) => ({ name: b.name, unit: b.unit, ceiling: BigInt(b.ceiling) })),
      actor_ref: announcer,
      record: contract as unknown as Envelope,
      ...(preset ? { preset } : {}),
      at: utc(this.deps.clock.now()),
    };
  }

  /** An upstream leaf opened as a root of this ledger (separate stores): same node id and ceilings, no parent here. */
  private importedRoot(leaf: DelegationContract, announcer: ActorRef): OpenBudgetRequest {
    const { parent_id: _parent, ...root } = this.budgetOf(leaf, announcer);
    return root;
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

}

/**
 * The operation as the chain's owner sees it: work under an upstream's chain
 * is done in the upstream owner's project space (a child cannot change
 * space, ADR-0014), which with separate stores is not this gateway's own.
 */
function inSpaceOf(contracts: readonly DelegationContract[], op?: OperationRequest): OperationRequest | undefined {
  if (!op || op.resource.kind !== 'project') return op;
  return { ...{}, ...op, resource: { ...{}, ...op.resource, project_id: contracts[0]!.body.owner.space_id } };
}

/** The one child id for (upstream leaf revision, this gateway, delegatee card): `dlg_` + 26 base32 chars of a digest. */
function importedChildId(leaf: DelegationContract, self: string, card: string): string {
  const h = hash('sha256', `${leaf.record_id}\u0000${leaf.revision_id}\u0000${leaf.content_digest}\u0000${self}\u0000${card}`, 'buffer');
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of h.subarray(0, 17)) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `dlg_${out}`;
}

/**
 * Contract signer keys from the sets pinned per upstream organisation: each
 * issuer only under its own set (the upstream's, or an ancestor's for three
 * hops). A revoked kid vouches for nothing (A2A §8.4.3); a key past its `exp`
 * still verifies the contracts it signed while valid — they are re-verified
 * at every turn, as Baton's own retired keys verify its own.
 */
export function pinnedSignerKeys(sets: ReadonlyMap<string, KeySet>): ResolveSignerKey {
  return async (kid, issuer) => {
    const set = sets.get(issuer.object_id);
    return set?.revoked.has(kid) ? undefined : set?.keys.get(kid)?.key;
  };
}
