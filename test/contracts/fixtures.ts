/** Shared fixtures: refs, a broad parent, an owner preset and a wired-up world. */
import { generateKeyPair } from 'jose';
import { digestOf } from '../../src/records/digest.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import type { RevisionRef } from '../../src/records/revision-ref.ts';
import type { VerifyKey } from '../../src/records/signature.ts';
import { manualClock } from '../../src/records/time.ts';
import { evaluateChain, type EvaluatedChain, type OperationRequest } from '../../src/contracts/admission.ts';
import { loadChain } from '../../src/contracts/attestation-chain.ts';
import { storeHeads } from '../../src/contracts/heads.ts';
import { issueContract, type EntryPointProfile, type IssuanceDeps, type TrustedCaller } from '../../src/contracts/issuance.ts';
import { mintChild, type MintDeps } from '../../src/contracts/mint.ts';
import type { OwnerBinding } from '../../src/contracts/model.ts';
import { definePreset, type DelegateeOption, type Preset } from '../../src/contracts/presets.ts';
import { A2A_OPERATIONS, type ScopeRegistry } from '../../src/contracts/scope.ts';
import type { ContractSigner } from '../../src/contracts/signing.ts';
import type { Terms } from '../../src/contracts/terms.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/store.ts';

export const T0 = '2026-10-01T12:00:00.000Z';
export const HOUR = 3_600_000;
export const at = (ms: number): string => new Date(Date.parse(T0) + ms).toISOString();

export function ref(id: string, rev = 'r1'): RevisionRef {
  return { object_id: id, revision_id: rev, content_digest: digestOf({ id, rev }) };
}

export const actors = {
  baton: ref('actor_baton'),
  owner: ref('actor_owner'),
  alice: ref('actor_alice'),
  mallory: ref('actor_mallory'),
  agentA: ref('actor_agent_a'),
  agentB: ref('actor_agent_b'),
  agentC: ref('actor_agent_c'),
};
export const delegatees: Record<'a' | 'b' | 'c', DelegateeOption> = {
  a: { card_ref: ref('card_a', 'card-r3'), actor_ref: actors.agentA, operator_ref: ref('op_a') },
  b: { card_ref: ref('card_b', 'card-r5'), actor_ref: actors.agentB, operator_ref: ref('op_b') },
  c: { card_ref: ref('card_c', 'card-r1'), actor_ref: actors.agentC, operator_ref: ref('op_c') },
};

export const owner: OwnerBinding = { namespace: 'ns_lab', access_domain: 'dom_research', space_id: 'sp1', config_revision: 'cfg_1' };
export const registry: ScopeRegistry = { operations: A2A_OPERATIONS, tools: new Set(['search', 'extract']) };

/** A broad but finite parent with something in every dimension. */
export function broadTerms(): Terms {
  return {
    scope: {
      operations: ['a2a.SendMessage', 'a2a.GetTask', 'a2a.CancelTask'],
      tools: ['search'],
      resources: [{ kind: 'project', project_id: 'PRJ-1' }, { kind: 'project', project_id: 'PRJ-2' }],
      data_classes: ['public', 'internal'],
      effect_classes: ['read', 'proposal', 'reversible_mutation'],
    },
    limits: {
      not_after: at(2 * HOUR),
      max_duration: { value: 2, unit: 'h' },
      max_invocations: 10,
      max_protected_operations: 100,
      max_tokens: 100_000,
      max_tool_calls: 50,
      max_retries: 3,
      max_concurrency: 4,
      spend: { amount_minor: '10000', currency: 'USD' },
    },
    budget_ceilings: [
      { name: 'tokens', unit: 'token', ceiling: '100000' },
      { name: 'operations', unit: 'operation', ceiling: '100' },
    ],
    autonomy: { tier: 'T2_bounded_execute', gates: [{ kind: 'pre_effect_permission' }, { kind: 'reviewer' }] },
    human_authorities: [{ principal_id: 'pr_alice', role: 'approver' }],
    reviewers: [{ role: 'citation_checker', independence: 'different_principal' }],
    consent_refs: [ref('consent_1')],
    verification: { pre_effect_checks: ['scope'], post_effect_checks: ['readback'], acceptance_criteria: ['schema'] },
    monitoring: {
      modes: ['pre_effect', 'periodic'],
      observers: [actors.owner],
      telemetry_classes: ['tool_calls'],
      heartbeat_max_seconds: 600,
      anomaly_triggers: ['budget_exhaustion'],
      circuit_breakers: [{ space_id: 'sp1', scope_kind: 'policy', scope_id: 'breaker-1' }],
    },
    subdelegation_policy: {
      allowed: true,
      max_remaining_depth: 3,
      max_descendants: 32,
      eligible_delegate_cards: ['card_a', 'card_b', 'card_c'],
      required_attestations: ['contract_signature'],
    },
    retry_policy: {
      idempotency_key: 'idem-root',
      retryable_outcomes: ['failed'],
      max_attempts: 3,
      min_backoff_ms: 1000,
      reconcile_before_retry: true,
      renewed_approval_conditions: ['scope_change'],
    },
    revocation: {
      authorities: [actors.owner],
      propagation: 'fence_descendants',
      ack_timeout_seconds: 60,
      readback_required: true,
      safe_stop: 'cooperative_cancel',
      compensation: 'separately_authorized',
    },
    control_scopes: [
      { space_id: 'sp1', scope_kind: 'space', scope_id: 'sp1' },
      { space_id: 'sp1', scope_kind: 'policy', scope_id: 'pol-1' },
    ],
    constraints: [{ kind: 'deny_operation', operation: 'a2a.ListTasks' }],
  };
}

/** The broad terms as an owner machine preset (lifetime instead of an absolute horizon). */
export function machinePresetRaw(overrides: Partial<Preset> = {}): Record<string, unknown> {
  const { limits, retry_policy, ...rest } = broadTerms();
  const { not_after: _n, ...ceilingLimits } = limits;
  const { idempotency_key: _k, ...retry } = retry_policy;
  return {
    preset_id: 'machine-research',
    revision: '3',
    kind: 'machine',
    eligible_delegatees: [delegatees.a, delegatees.b],
    objective_types: ['evidence_search', 'extract_quote'],
    issuance: { max_active_roots: 8, max_per_minute: 4 },
    terms: { ...rest, limits: { ...ceilingLimits, lifetime_seconds: 7200 }, retry_policy: retry },
    ...overrides,
  };
}

export const caller: TrustedCaller = { actor: actors.alice, subject: { subject_id: 'sub_alice', kind: 'local' } };

export const baseRequest = {
  delegatee_card_ref: delegatees.a.card_ref,
  objective: { text: 'Find evidence for claim C-1', type: 'evidence_search' },
  input_revisions: [ref('SRC-1')],
};

export type World = Awaited<ReturnType<typeof world>>;

// One scratch directory per process, removed at exit (not a vitest hook: the
// benchmarks import these fixtures too).
let scratch: string | undefined;
let worlds = 0;
function scratchDir(): string {
  if (!scratch) {
    const dir = mkdtempSync(join(tmpdir(), 'baton-contracts-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    scratch = dir;
  }
  return scratch;
}

/** Keys, clock, ids, store and the issuance/mint/evaluate operations wired together. */
export async function world() {
  const clock = manualClock(T0);
  const ids = sequentialIds('w');
  const keys = new Map<string, VerifyKey>();
  const makeSigner = async (actorRef: RevisionRef, kid: string, register = true): Promise<ContractSigner> => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    if (register) keys.set(`${actorRef.object_id}|${kid}`, pair.publicKey);
    return { actorRef, kid, alg: 'ES256', key: pair.privateKey };
  };
  const signer = await makeSigner(actors.baton, 'baton-k1');
  const resolveSignerKey = async (kid: string, issuer: RevisionRef) => keys.get(`${issuer.object_id}|${kid}`);
  // A real SQLite file: contract storage goes through the same adapter production uses.
  const store = SqliteStore.open(join(scratchDir(), `c${++worlds}.db`), { create: true });
  const heads = storeHeads(store);
  const descendants = new Map<string, number>();
  const preset = definePreset(machinePresetRaw(), { maxLifetimeSeconds: 7200 });
  const counters = { activeRoots: async () => 0, issuedSince: async () => 0 };
  const issuanceDeps: IssuanceDeps = { clock, ids, signer, owner, registry, maxLifetimeSeconds: 7200, issuanceCounters: counters };
  const mintDeps: MintDeps = { clock, ids, signer, registry, countDescendants: async (root) => descendants.get(root.object_id) ?? 0 };
  const adm = { clock, resolveSignerKey, heads };

  async function issue(request: Record<string, unknown> = {}, profile: EntryPointProfile = { path: 'owner_preset', preset }, deps = issuanceDeps) {
    const issued = await issueContract({ ...baseRequest, ...request }, caller, profile, deps);
    await store.putRecord(issued.contract as never);
    return issued;
  }
  async function evaluate(leaf: RevisionRef, op?: OperationRequest): Promise<EvaluatedChain> {
    return evaluateChain(await loadChain(store, leaf), adm, op);
  }
  async function mint(parent: RevisionRef, request: Record<string, unknown>, actor: RevisionRef) {
    const chain = await evaluate(parent);
    const minted = await mintChild(chain, request, actor, mintDeps);
    await store.putRecord(minted.contract as never);
    const root = minted.chain.root_ref.object_id;
    descendants.set(root, (descendants.get(root) ?? 0) + 1);
    return minted;
  }
  return { clock, ids, keys, signer, makeSigner, resolveSignerKey, store, heads, preset, counters, issuanceDeps, mintDeps, adm, descendants, issue, evaluate, mint };
}

/** A child request to delegatee `who` that narrows nothing explicitly. */
export function childRequest(who: 'a' | 'b' | 'c', terms: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    delegatee: delegatees[who],
    objective: { text: 'sub-task', type: 'evidence_search' },
    input_revisions: [],
    terms,
  };
}
