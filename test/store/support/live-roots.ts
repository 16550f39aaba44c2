/**
 * The live-root table (src/store/capacity.ts) must change what the ADR-0014
 * capacity counts cost, never what they answer. This differential check runs
 * random histories of issuance, delegation, admission (apart, or with its
 * root in one transaction), settlement, revocation and the passing of time
 * through a real store, and after every step compares the store's counts
 * with the rule written directly over the ledger rows, as the counts were
 * before the table existed.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { isBatonError } from '../../../src/errors.ts';
import { expectCodeAsync } from '../../helpers/errors.ts';
import { randomIds } from '../../../src/records/ids.ts';
import type { PresetIssuance } from '../../../src/ledger/types.ts';
import type { Store } from '../../../src/store/port.ts';
import { activeRootsSql, presetActiveRootsSql, presetIssuedSinceSql, retainedSql } from '../../../src/store/capacity.ts';
import type { Unresolved } from '../../../src/store/unresolved-sql.ts';
import { actor, admission, agentScope, attemptScope, chain, decision, delegationScope, freshSpace, plannedTask, publishAgent } from './fixtures.ts';

/** Runs SQL with named placeholders (`:name`) and returns the single count it selects. */
export type CountQuery = (sql: (p: (name: string) => string) => string, values: Record<string, string>) => Promise<number>;

const TERMINAL = "('revoked','expired','retired','superseded')";
const ROOT_LIVE = (root: string) => `
    (NOT EXISTS (SELECT 1 FROM ledger_reservations r WHERE r.root_id = ${root})
     OR EXISTS (SELECT 1 FROM ledger_reservations r WHERE r.root_id = ${root} AND r.status IN ('held', 'unknown')))`;

/** The rule over the ledger rows themselves (the SQL before ledger_live_roots). */
const reference = {
  active: (p: (n: string) => string, where: string, resWhere: string) => `
    SELECT count(*) AS n FROM (
      SELECT n.node_id FROM ledger_nodes n
      LEFT JOIN control_heads h ON h.project_id = 'rw-control:' || n.space_id AND h.branch_id = 'delegation:' || n.node_id
      WHERE n.parent_id IS NULL AND ${where} AND n.not_after > ${p('at')}
        AND coalesce(h.state, '') NOT IN ${TERMINAL} AND ${ROOT_LIVE('n.node_id')}
      UNION
      SELECT r.root_id FROM ledger_reservations r JOIN ledger_nodes n ON n.node_id = r.root_id WHERE ${resWhere} AND r.status IN ('held', 'unknown')
    ) AS active`,
  /** The preset's roots issued after `since`, over the rows (the count before migration 24's window). */
  issued: (p: (n: string) => string) => `SELECT count(*) AS n FROM ledger_nodes WHERE preset_id = ${p('preset')} AND parent_id IS NULL AND created_at > ${p('since')}`,
  retained: (p: (n: string) => string) => `
    SELECT (SELECT count(*) FROM ledger_nodes n WHERE n.owner_namespace = ${p('ns')} AND n.not_after > ${p('at')} AND ${ROOT_LIVE('n.root_id')})
         + (SELECT count(*) FROM ledger_reservations WHERE owner_namespace = ${p('ns')} AND status IN ('held', 'unknown')) AS n`,
};

type Step =
  | { kind: 'root'; minutes: number; preset: boolean }
  | { kind: 'task'; minutes: number; preset: boolean; consume: boolean }
  | { kind: 'child'; of: number; minutes: number }
  | { kind: 'admit'; node: number; consume: boolean }
  | { kind: 'settle'; reservation: number; outcome: 'measured' | 'unknown' | 'not_dispatched' }
  | { kind: 'revoke'; root: number }
  | { kind: 'wait'; minutes: number }
  | { kind: 'tick'; seconds: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('root' as const), minutes: fc.integer({ min: 1, max: 90 }), preset: fc.boolean() }),
  // A new task: its root opened and admitted in one transaction (admitTask), as the gateway does.
  fc.record({ kind: fc.constant('task' as const), minutes: fc.integer({ min: 1, max: 90 }), preset: fc.boolean(), consume: fc.boolean() }),
  fc.record({ kind: fc.constant('child' as const), of: fc.nat(), minutes: fc.integer({ min: 1, max: 90 }) }),
  fc.record({ kind: fc.constant('admit' as const), node: fc.nat(), consume: fc.boolean() }),
  fc.record({ kind: fc.constant('admit' as const), node: fc.nat(), consume: fc.boolean() }),
  fc.record({ kind: fc.constant('settle' as const), reservation: fc.nat(), outcome: fc.constantFrom('measured' as const, 'unknown' as const, 'not_dispatched' as const) }),
  fc.record({ kind: fc.constant('revoke' as const), root: fc.nat() }),
  fc.record({ kind: fc.constant('wait' as const), minutes: fc.integer({ min: 1, max: 70 }) }),
  // Seconds either way: roots inside one preset minute, and an issuer whose clock is behind the one before it.
  fc.record({ kind: fc.constant('tick' as const), seconds: fc.integer({ min: -90, max: 59 }) }),
);

/** Refusals the rules may give on a random history; anything else fails the run. */
const expected = (err: unknown) => ['context_invalidated', 'deny', 'limit_exceeded', 'invalid_request'].some((code) => isBatonError(err, code as never));

/** `unresolved`: how the store under test counts a namespace's unresolved reservations (its dialect's retainedSql). */
export async function liveRootsAgreeWithTheRule(store: Store, count: CountQuery, runs: number, unresolved: Unresolved): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
      const space = freshSpace();
      await publishAgent(store, space);
      const ns = `ns-${space}`;
      const preset = { preset_id: `preset-${space}`, max_active_roots: 1_000, max_per_minute: 1_000 };
      let clock = Date.parse('2030-01-01T00:00:00.000Z');
      const at = () => new Date(clock).toISOString();
      const nodes: Array<{ id: string; chain: string[]; notAfter: number }> = [];
      const reservations: string[] = [];
      const check = async () => {
        for (const when of [clock, clock + 30 * 60_000, clock + 10 * 3_600_000]) {
          const values = { ns, at: new Date(when).toISOString(), preset: preset.preset_id };
          expect(await count(activeRootsSql, values)).toBe(await count((p) => reference.active(p, `n.owner_namespace = ${p('ns')}`, `r.owner_namespace = ${p('ns')}`), values));
          expect(await count(presetActiveRootsSql, values)).toBe(await count((p) => reference.active(p, `n.preset_id = ${p('preset')}`, `n.preset_id = ${p('preset')}`), values));
          expect(await count((p) => retainedSql(p, unresolved), values)).toBe(await count(reference.retained, values));
        }
        // The preset's issuance after any time, behind or ahead of its window's own start (capacity.ts presetIssuedSinceSql).
        for (const back of [-30, 0, 1, 30, 59, 60, 61, 90, 150]) {
          const values = { preset: preset.preset_id, since: new Date(clock - back * 1_000).toISOString() };
          expect(await count(presetIssuedSinceSql, values)).toBe(await count(reference.issued, values));
        }
      };
      for (const s of steps) {
        try {
          if (s.kind === 'root') {
            const id = randomIds.next('dlg');
            const notAfter = clock + s.minutes * 60_000;
            await store.ledger.openBudget({
              node_id: id, space_id: space, owner_namespace: ns, actor_ref: actor, at: at(), not_after: new Date(notAfter).toISOString(),
              dimensions: [{ name: 'units', unit: 'admission', ceiling: 100n }],
              ...(s.preset ? { preset } : {}),
            });
            nodes.push({ id, chain: [id], notAfter });
          } else if (s.kind === 'task') {
            const id = randomIds.next('dlg');
            const notAfter = clock + s.minutes * 60_000;
            const scopes = [agentScope(space)];
            const effect = randomIds.next('eff');
            const reservation_id = randomIds.next('res');
            const budget = {
              node_id: id, space_id: space, owner_namespace: ns, actor_ref: actor, at: at(), not_after: new Date(notAfter).toISOString(),
              dimensions: [{ name: 'units', unit: 'admission', ceiling: 100n }],
              ...(s.preset ? { preset } : {}),
            };
            await store.ledger.admitTask(
              await plannedTask(store, [budget], [...(await store.control.fenceSet(scopes))], (fence_set) => ({
                effect_id: effect, reservation_id, node_id: id, kind: s.consume ? 'consume' : 'reserve', amounts: { units: 1n }, fence_set, scopes,
                decision: decision(effect), attempt_scope: attemptScope(space, randomIds.next('att')), actor_ref: actor, at: at(),
              })),
            );
            nodes.push({ id, chain: [id], notAfter });
            if (!s.consume) reservations.push(reservation_id);
          } else if (s.kind === 'child' && nodes.length > 0) {
            const parent = nodes[s.of % nodes.length]!;
            const id = randomIds.next('dlg');
            const notAfter = Math.min(parent.notAfter, clock + s.minutes * 60_000);
            await store.ledger.openBudget({
              node_id: id, parent_id: parent.id, space_id: space, owner_namespace: ns, actor_ref: actor, at: at(), not_after: new Date(notAfter).toISOString(),
              dimensions: [{ name: 'units', unit: 'admission', ceiling: 10n }],
            });
            nodes.push({ id, chain: [...parent.chain, id], notAfter });
          } else if (s.kind === 'admit' && nodes.length > 0) {
            const node = nodes[s.node % nodes.length]!;
            const req = { ...(await admission(store, space, node.chain, node.id, { units: 1n }, s.consume ? 'consume' : 'reserve')), at: at() };
            await store.ledger.admit(req);
            if (!s.consume) reservations.push(req.reservation_id);
          } else if (s.kind === 'settle' && reservations.length > 0) {
            const reservation_id = reservations[s.reservation % reservations.length]!;
            const outcome = s.outcome === 'measured' ? { kind: 'measured' as const, actual: new Map([['units', 1n]]) } : { kind: s.outcome };
            const evidence = { object_id: 'vr_1', revision_id: randomIds.next('rev'), content_digest: `sha256:${'b'.repeat(64)}` };
            await store.ledger.settle({ reservation_id, outcome, evidence, at: at() });
          } else if (s.kind === 'revoke' && nodes.length > 0) {
            const root = nodes[s.root % nodes.length]!.chain[0]!;
            await store.control.appendControl({ event_type: 'rw003.delegation.revoked', control_scope_ref: delegationScope(space, root), actor_ref: actor, idempotency_key: `revoke:${root}` });
          } else if (s.kind === 'wait') {
            clock += s.minutes * 60_000;
          } else if (s.kind === 'tick') {
            clock += s.seconds * 1_000;
          }
        } catch (err) {
          if (!expected(err)) throw err;
        }
        await check();
        // Opening a root forgets the namespace's never-reserved roots that expired a margin (60 s) before it.
        if (s.kind === 'root' || s.kind === 'task') {
          expect(await count((p) => `SELECT count(*) AS n FROM ledger_live_roots WHERE owner_namespace = ${p('ns')} AND not_after <= ${p('before')} AND unresolved = 0`, { ns, before: new Date(clock - 60_000).toISOString() })).toBe(0);
        }
      }
    }),
    { numRuns: runs },
  );
}

/**
 * Opening a root forgets the namespace's never-reserved roots that expired a
 * margin (60 s) before it, at exactly the horizon; one expiring a moment
 * later keeps its row (capacity.ts pruneLiveRootsSql).
 */
export async function pruneForgetsExpiredRoots(store: Store, count: CountQuery): Promise<void> {
  const space = freshSpace();
  const ns = `ns-${space}`;
  const open = (at: string, not_after: string) => {
    const node_id = randomIds.next('dlg');
    return store.ledger.openBudget({ node_id, space_id: space, owner_namespace: ns, actor_ref: actor, at, not_after, dimensions: [{ name: 'units', unit: 'admission', ceiling: 1n }] }).then(() => node_id);
  };
  const gone = await open('2030-01-01T00:00:00.000Z', '2030-01-01T00:01:00.000Z');
  const kept = await open('2030-01-01T00:00:00.000Z', '2030-01-01T00:01:00.001Z');
  await open('2030-01-01T00:02:00.000Z', '2030-01-01T01:00:00.000Z');
  const rows = (root: string) => count((p) => `SELECT count(*) AS n FROM ledger_live_roots WHERE root_id = ${p('root')}`, { root });
  expect([await rows(gone), await rows(kept)]).toStrictEqual([0, 1]);
}

/** The second `s` after 2030-01-01T00:00:00Z, as the ISO time the ledger stores. */
const at2030 = (s: number) => new Date(Date.parse('2030-01-01T00:00:00.000Z') + s * 1_000).toISOString();

/** Opens a root of `preset` in `space` at second `s` (at2030), expiring an hour in. */
const presetRootAt = (store: Store, space: string, preset: PresetIssuance, s: number) =>
  store.ledger.openBudget({
    node_id: randomIds.next('dlg'), space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: at2030(s), not_after: at2030(3_600),
    dimensions: [{ name: 'units', unit: 'admission', ceiling: 1n }], preset,
  });

/**
 * A preset's issuance count (capacity.ts presetIssuedSinceSql) through a
 * clock that goes back: roots at 0 s, 30 s and 100 s move the preset's
 * window to start at 40 s; a root then issued at 50 s (an issuer whose clock
 * is behind) must not move it back, and every count, before or after the
 * window's start, is the count over the rows.
 */
export async function presetWindowFollowsAnyClock(store: Store, count: CountQuery): Promise<void> {
  const space = freshSpace();
  await publishAgent(store, space);
  const preset = { preset_id: `preset-${space}`, max_active_roots: 1_000, max_per_minute: 1_000 };
  const counts = async () => {
    const out: Array<[number, number]> = [];
    for (const s of [-61, -10, 0, 29, 30, 40, 41, 49, 50, 99, 100]) {
      const values = { preset: preset.preset_id, since: at2030(s) };
      out.push([await count(presetIssuedSinceSql, values), await count(reference.issued, values)]);
    }
    return out;
  };
  for (const s of [0, 30, 100, 50]) {
    await presetRootAt(store, space, preset, s);
    for (const [window, rows] of await counts()) expect(window).toBe(rows);
  }
  expect(await count((p) => `SELECT count(*) AS n FROM ledger_preset_windows WHERE preset_id = ${p('preset')} AND since = ${p('since')}`, { preset: preset.preset_id, since: at2030(40) })).toBe(1);
  // Since 40 s: the roots issued at 50 s and 100 s.
  expect(await count(presetIssuedSinceSql, { preset: preset.preset_id, since: at2030(40) })).toBe(2);
}

/**
 * Migration 24 on a store whose preset already issued this minute: roots at
 * 0, 10 and 20 s, then `downgrade` takes the store back to schema 23 (no
 * window table, no trigger) and returns it reopened, migrated again. The
 * three roots still count, over the rows while the preset has no window row:
 * a fourth is over its rate of 3. A minute after the first, one more fits,
 * and its insert starts the row with the count of the minute.
 */
export async function presetRateAcrossMigration24<S extends Store>(store: S, count: CountQuery, downgrade: () => Promise<S>): Promise<S> {
  const space = freshSpace();
  const preset = { preset_id: `preset-${space}`, max_active_roots: 100, max_per_minute: 3 };
  // The store in use: `downgrade` replaces it.
  const issue = (s: number) => presetRootAt(store, space, preset, s);
  await publishAgent(store, space);
  for (const s of [0, 10, 20]) await issue(s);
  store = await downgrade();
  expect((await expectCodeAsync(issue(30), 'limit_exceeded')).details).toMatchObject({ bound: 'issuance_rate', preset: preset.preset_id });
  await issue(61);
  const row = (p: (n: string) => string) => `SELECT count(*) AS n FROM ledger_preset_windows WHERE preset_id = ${p('preset')} AND since = ${p('since')} AND n = 3`;
  expect(await count(row, { preset: preset.preset_id, since: at2030(1) })).toBe(1);
  expect((await expectCodeAsync(issue(62), 'limit_exceeded')).details).toMatchObject({ bound: 'issuance_rate' });
  return store;
}

/**
 * A namespace holding four unresolved reservations on one chain: five held, one consumed (never unresolved), one
 * of the held settled and one settled unknown (still unresolved). For the tests of the unresolved counter.
 */
export async function fourUnresolved(store: Store) {
  const space = freshSpace();
  const evidence = { object_id: 'vr_1', revision_id: 'rev_1', content_digest: `sha256:${'b'.repeat(64)}` };
  const settle = (on: Store, reservation_id: string, outcome: 'measured' | 'unknown') =>
    on.ledger.settle({ reservation_id, outcome: outcome === 'measured' ? { kind: 'measured', actual: new Map([['units', 1n]]) } : { kind: 'unknown' }, evidence, at: new Date().toISOString() });
  await publishAgent(store, space);
  const c = await chain(store, space, { root: 100n });
  const admit = async (on: Store) => {
    const req = await admission(on, space, [c.root, c.child, c.leaf], c.leaf);
    await on.ledger.admit(req);
    return req.reservation_id;
  };
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await admit(store));
  await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 1n }, 'consume'));
  await settle(store, ids[0]!, 'measured');
  await settle(store, ids[1]!, 'unknown');
  return { space, ns: `ns-${space}`, ids, settle, admit };
}
