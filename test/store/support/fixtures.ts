/** Builders shared by the store contract suite, the race workers and the crash tests. */
import type { ControlScopeRef } from '../../../src/control/scope.ts';
import type { ControlBoundaryRef } from '../../../src/control/fence.ts';
import { planOpens, unplacedParents, type Placement } from '../../../src/ledger/plan.ts';
import type { AdmissionRequest, OpenBudgetRequest, PresetIssuance, TaskAdmissionRequest } from '../../../src/ledger/types.ts';
import { sealRecord } from '../../../src/records/envelope.ts';
import { randomIds } from '../../../src/records/ids.ts';
import { systemClock } from '../../../src/records/time.ts';
import type { Store } from '../../../src/store/port.ts';

export const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
export const FAR = '2099-01-01T00:00:00.000Z';
export const NOW = () => new Date().toISOString();

export const agentScope = (space: string, agent = 'agent_x'): ControlScopeRef => ({ space_id: space, scope_kind: 'agent', scope_id: agent });
export const delegationScope = (space: string, id: string): ControlScopeRef => ({ space_id: space, scope_kind: 'delegation', scope_id: id });
export const attemptScope = (space: string, id: string): ControlScopeRef => ({ space_id: space, scope_kind: 'attempt', scope_id: id });

/** A unique space per test so suites can share one PostgreSQL database. */
export function freshSpace(): string {
  return randomIds.next('space');
}

export async function publishAgent(store: Store, space: string, agent = 'agent_x'): Promise<void> {
  await store.control.appendControl({ event_type: 'rw003.agent_card.published', control_scope_ref: agentScope(space, agent), actor_ref: actor });
}

/** A fresh space with its agent published, and a root → child → grandchild chain in it ({@link chain}). */
export async function publishedChain(store: Store): Promise<{ space: string; c: Awaited<ReturnType<typeof chain>> }> {
  const space = freshSpace();
  await publishAgent(store, space);
  return { space, c: await chain(store, space) };
}

/** Root → child → grandchild, each capped on `units` (admissions) and `tokens`. */
export async function chain(store: Store, space: string, caps: { root: bigint; child?: bigint; leaf?: bigint } = { root: 10n }) {
  const root = randomIds.next('dlg');
  const child = randomIds.next('dlg');
  const leaf = randomIds.next('dlg');
  const dims = (n: bigint) => [
    { name: 'units', unit: 'admission', ceiling: n },
    { name: 'tokens', unit: 'token', ceiling: n * 100n },
  ];
  const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW() };
  await store.ledger.openBudget({ ...base, node_id: root, not_after: FAR, dimensions: dims(caps.root) });
  await store.ledger.openBudget({ ...base, node_id: child, parent_id: root, not_after: FAR, dimensions: dims(caps.child ?? caps.root) });
  await store.ledger.openBudget({ ...base, node_id: leaf, parent_id: child, not_after: FAR, dimensions: dims(caps.leaf ?? caps.child ?? caps.root) });
  return { root, child, leaf };
}

export function decision(effect: string) {
  return sealRecord(
    { type: 'permission_decision', body: { effect_id: effect, decision: 'allow' }, issuedBy: actor, lifecycle: 'recorded' },
    { ids: randomIds, clock: systemClock },
  );
}

/** An admission request fenced on the current heads of every applicable scope. */
export async function admission(
  store: Store,
  space: string,
  nodeIds: readonly string[],
  leaf: string,
  amounts: Record<string, bigint> = { units: 1n },
  kind: 'reserve' | 'consume' = 'reserve',
): Promise<AdmissionRequest> {
  const scopes = [agentScope(space)];
  const fence = await store.control.fenceSet([...scopes, ...nodeIds.map((id) => delegationScope(space, id))]);
  const effect = randomIds.next('eff');
  return {
    effect_id: effect,
    reservation_id: randomIds.next('res'),
    node_id: leaf,
    kind,
    amounts,
    fence_set: [...fence],
    scopes,
    decision: decision(effect),
    attempt_scope: attemptScope(space, randomIds.next('att')),
    actor_ref: actor,
    at: NOW(),
  };
}

/**
 * A task admission planned as the gateway plans it (src/gateway/path/admit.ts):
 * the budgets' new heads added to `fence`, then the admission built over it.
 */
export async function plannedTask(store: Store, budgets: OpenBudgetRequest[], fence: ControlBoundaryRef[], build: (fence: ControlBoundaryRef[]) => AdmissionRequest): Promise<TaskAdmissionRequest> {
  const parents = new Map<string, Placement>();
  for (const id of unplacedParents(budgets, fence)) {
    const node = await store.ledger.node(id);
    if (node) parents.set(id, { root_id: node.root_id, depth: node.depth });
  }
  const plan = planOpens(budgets, fence, randomIds, parents);
  return { budgets: plan.budgets, admission: build(plan.fence_set) };
}

/** How {@link taskAdmission} admits: `units: 1` reserved at the present instant unless told. */
export interface TaskAdmissionOptions {
  effect?: string;
  amounts?: Record<string, bigint>;
  kind?: 'reserve' | 'consume';
  at?: string;
  follow?: AdmissionRequest['follow'];
}

/** A task admission on `leaf` under the space's agent scope, planned over `fence` with {@link plannedTask}. */
export function taskAdmission(store: Store, space: string, budgets: OpenBudgetRequest[], fence: ControlBoundaryRef[], leaf: string, opts: TaskAdmissionOptions = {}): Promise<TaskAdmissionRequest> {
  const effect = opts.effect ?? randomIds.next('eff');
  return plannedTask(store, budgets, fence, (completed) => ({
    effect_id: effect,
    reservation_id: randomIds.next('res'),
    node_id: leaf,
    kind: opts.kind ?? 'reserve',
    amounts: opts.amounts ?? { units: 1n },
    fence_set: completed,
    scopes: [agentScope(space)],
    decision: decision(effect),
    attempt_scope: attemptScope(space, randomIds.next('att')),
    actor_ref: actor,
    at: opts.at ?? NOW(),
    ...(opts.follow ? { follow: opts.follow } : {}),
  }));
}

/**
 * A new root issued from `preset` and its first admission, in one
 * transaction (ledger.admitTask): what the gateway does for every new task.
 * `notAfter` in the past makes the fence or expiry refuse it.
 */
export function presetTask(store: Store, space: string, preset: PresetIssuance, opts: { units?: bigint; staleFence?: boolean; gateway?: string } = {}) {
  const root = randomIds.next('dlg');
  const effect = randomIds.next('eff');
  const scopes = [agentScope(space)];
  return {
    root,
    effect,
    run: async () => {
      const pre = [...(await store.control.fenceSet(scopes))];
      const fence = opts.staleFence ? pre.map((b) => ({ ...b, position: b.position + 1 })) : pre;
      const budget = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW(), node_id: root, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: opts.units ?? 5n }], preset };
      const follow = { attempt_id: randomIds.next('att'), lease_owner: 'node_test', lease_until: NOW(), deadline: FAR, ...(opts.gateway ? { gateway_id: opts.gateway } : {}) };
      return taskAdmission(store, space, [budget], fence, root, { effect, follow }).then((r) => store.ledger.admitTask(r));
    },
  };
}
