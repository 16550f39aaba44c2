/**
 * The push storage contract (webhook configs and the delivery outbox), run
 * against SQLite always and PostgreSQL when BATON_TEST_PG is set. Every test
 * gets an empty database, because claims take whatever is due.
 */
import { describe, expect, it } from 'vitest';
import { randomIds } from '../../../src/records/ids.ts';
import { refOf, sealRecord } from '../../../src/records/envelope.ts';
import { systemClock } from '../../../src/records/time.ts';
import type { DeliveryRow, PushConfigRow, Store } from '../../../src/store/port.ts';
import { isPurgedBody, purgedBody } from '../../../src/store/push-sql.ts';
import { expectCodeAsync } from '../../helpers/errors.ts';
import { actor } from './fixtures.ts';

/** A store on an empty database, and a way to open a second, independent one on the same database. */
export type OpenPush = () => Promise<{ store: Store; twin(): Promise<Store> }>;

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
/** Fixed-width UTC timestamps `s` seconds after T0. */
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

/** The gateway (its actor id) the rows below belong to, unless a test names another. */
const GW = 'actor_baton_a';

const config = (task_id: string, config_id: string, over: Partial<PushConfigRow> = {}) => ({
  task_id,
  config_id,
  caller_id: 'caller_a',
  url: `https://hooks.example/${config_id}`,
  sealed_credentials: null,
  created_at: at(0),
  gateway_id: GW as string | null,
  ...over,
});

const delivery = (delivery_id: string, over: Partial<DeliveryRow> = {}): DeliveryRow => ({
  delivery_id,
  task_id: 'att_1',
  config_id: 'cfg_1',
  revision_id: 'rev_1',
  body: `{"id":"${delivery_id}"}`,
  status: 'pending',
  attempts: 0,
  next_at: at(0),
  lease_until: null,
  lease_owner: null,
  last_error: null,
  created_at: at(0),
  delivered_at: null,
  gateway_id: GW,
  ...over,
});

const task = (body: Record<string, unknown>, prior?: ReturnType<typeof sealRecord>) =>
  sealRecord(
    { type: 'execution_attempt', body, issuedBy: actor, lifecycle: 'active', ...(prior ? { recordId: prior.record_id, prior: refOf(prior) } : {}) },
    { ids: randomIds, clock: systemClock },
  );

export function pushContract(name: string, open: OpenPush): void {
  describe(`${name}: push configs`, () => {
    it('upserts on (task, config): a second put replaces every field and clears deletion and seen revision', async () => {
      const { store } = await open();
      await store.push.putConfig(config('att_1', 'a', { created_at: at(1) }));
      await store.push.putConfig(config('att_1', 'b', { created_at: at(2), sealed_credentials: 'sealed:xyz' }));
      await store.push.putConfig(config('att_2', 'a'));
      expect(await store.push.configs('att_1')).toStrictEqual([
        { ...config('att_1', 'a', { created_at: at(1) }), deleted_at: null, seen_revision: null },
        { ...config('att_1', 'b', { created_at: at(2), sealed_credentials: 'sealed:xyz' }), deleted_at: null, seen_revision: null },
      ]);
      await store.push.markSeen('att_1', 'a', 'rev_x');
      expect((await store.push.config('att_1', 'a'))?.seen_revision).toBe('rev_x');
      const replaced = config('att_1', 'a', { caller_id: 'caller_b', url: 'https://other.example/h', sealed_credentials: 'sealed:new', created_at: at(3), gateway_id: 'actor_baton_b' });
      await store.push.putConfig(replaced);
      expect(await store.push.config('att_1', 'a')).toStrictEqual({ ...replaced, deleted_at: null, seen_revision: null });
      expect((await store.push.configs('att_1')).map((c) => c.config_id)).toEqual(['b', 'a']); // ordered by created_at
      expect(await store.push.config('att_1', 'zzz')).toBeUndefined();
      await store.close();
    });

    it('hides a deleted config, reports a second delete as false, and a new put revives it', async () => {
      const { store } = await open();
      await store.push.putConfig(config('att_1', 'a'));
      await store.push.putConfig(config('att_1', 'b'));
      expect(await store.push.deleteConfig('att_1', 'a', at(5))).toBe(true);
      expect(await store.push.deleteConfig('att_1', 'a', at(6))).toBe(false);
      expect(await store.push.deleteConfig('att_1', 'never', at(6))).toBe(false);
      expect(await store.push.config('att_1', 'a')).toBeUndefined();
      expect((await store.push.configs('att_1')).map((c) => c.config_id)).toEqual(['b']);
      await store.push.putConfig(config('att_1', 'a', { created_at: at(7) }));
      expect(await store.push.config('att_1', 'a')).toMatchObject({ deleted_at: null, created_at: at(7) });
      await store.close();
    });

    it("lists active configs whose task record moved past seen_revision, with the task's head", async () => {
      const { store } = await open();
      const r1 = task({ n: 1 });
      await store.putRecord(r1);
      const other = task({ n: 9 });
      await store.putRecord(other);
      await store.push.putConfig(config(r1.record_id, 'a'));
      await store.push.putConfig(config(other.record_id, 'gone'));
      await store.push.deleteConfig(other.record_id, 'gone', at(1));
      await store.push.putConfig(config('att_without_record', 'a'));
      expect(await store.push.changedConfigs(100, GW)).toStrictEqual([
        { ...config(r1.record_id, 'a'), deleted_at: null, seen_revision: null, head_revision: r1.revision_id },
      ]);
      await store.push.markSeen(r1.record_id, 'a', r1.revision_id);
      expect(await store.push.changedConfigs(100, GW)).toEqual([]);
      const r2 = task({ n: 2 }, r1);
      await store.putRecord(r2);
      expect(await store.push.changedConfigs(100, GW)).toMatchObject([{ task_id: r1.record_id, seen_revision: r1.revision_id, head_revision: r2.revision_id }]);
      await store.push.putConfig(config(r1.record_id, 'b', { created_at: at(1) }));
      expect(await store.push.changedConfigs(1, GW)).toHaveLength(1);
      await store.close();
    });

    it('marks seen only the registration it was told about, when given a generation', async () => {
      const { store } = await open();
      await store.push.putConfig(config('att_1', 'a', { created_at: at(1) }));
      await store.push.markSeen('att_1', 'a', 'rev_1', at(0)); // an earlier registration: no effect
      expect((await store.push.config('att_1', 'a'))?.seen_revision).toBeNull();
      await store.push.markSeen('att_1', 'a', 'rev_1', at(1));
      expect((await store.push.config('att_1', 'a'))?.seen_revision).toBe('rev_1');
      await store.push.markSeen('att_1', 'a', 'rev_2');
      expect((await store.push.config('att_1', 'a'))?.seen_revision).toBe('rev_2');
      await store.close();
    });

    it("gateways sharing the store recover only their own gateway's configs (and configs that name none)", async () => {
      const { store } = await open();
      const r = task({ n: 1 });
      await store.putRecord(r);
      await store.push.putConfig(config(r.record_id, 'a', { created_at: at(1) }));
      await store.push.putConfig(config(r.record_id, 'b', { created_at: at(2), gateway_id: 'actor_baton_b' }));
      await store.push.putConfig(config(r.record_id, 'legacy', { created_at: at(3), gateway_id: null }));
      const ids = (rows: PushConfigRow[]) => rows.map((c) => c.config_id);
      expect(ids(await store.push.changedConfigs(100, 'actor_baton_b'))).toEqual(['b', 'legacy']);
      expect(ids(await store.push.changedConfigs(100, GW))).toEqual(['a', 'legacy']);
      expect(await store.push.changedConfigs(100, 'actor_baton_c')).toMatchObject([{ config_id: 'legacy', gateway_id: null, head_revision: r.revision_id }]);
      await store.close();
    });

  });

  describe(`${name}: push outbox`, () => {
    it('enqueues idempotently: an existing delivery id keeps its first row', async () => {
      const { store } = await open();
      expect(await store.push.enqueue([delivery('d1'), delivery('d2')])).toBe(2);
      expect(await store.push.enqueue([delivery('d1', { body: '{"other":true}', revision_id: 'rev_other' }), delivery('d3')])).toBe(1);
      expect(await store.push.enqueue([delivery('d1', { body: 'again' })])).toBe(0);
      expect(await store.push.enqueue([])).toBe(0);
      expect(await store.push.delivery('d1')).toStrictEqual(delivery('d1'));
      expect(await store.push.delivery('nope')).toBeUndefined();
      // More rows than one INSERT carries.
      const many = Array.from({ length: 1203 }, (_, i) => delivery(`m${String(i).padStart(4, '0')}`));
      expect(await store.push.enqueue(many)).toBe(1203);
      expect(await store.push.enqueue(many)).toBe(0);
      await store.close();
    });

    it('claims due rows in due order, counts each claim as a try, and leaves leased and future rows alone', async () => {
      const { store } = await open();
      await store.push.enqueue([delivery('late', { next_at: at(100) }), delivery('d2', { next_at: at(2) }), delivery('d1', { next_at: at(1) }), delivery('d3', { next_at: at(3) })]);
      expect(await store.push.claim('owner_a', at(10), at(40), 0, GW)).toEqual([]);
      const first = await store.push.claim('owner_a', at(10), at(40), 2, GW);
      expect(first).toStrictEqual([
        delivery('d1', { next_at: at(1), status: 'delivering', attempts: 1, lease_owner: 'owner_a', lease_until: at(40) }),
        delivery('d2', { next_at: at(2), status: 'delivering', attempts: 1, lease_owner: 'owner_a', lease_until: at(40) }),
      ]);
      expect((await store.push.claim('owner_a', at(10), at(40), 10, GW)).map((d) => d.delivery_id)).toEqual(['d3']);
      expect(await store.push.claim('owner_b', at(39), at(70), 10, GW)).toEqual([]); // leased until 40; 'late' is due at 100
      expect(await store.push.delivery('late')).toMatchObject({ status: 'pending', attempts: 0 });
      await store.close();
    });

    it('re-claims an expired lease for another owner, after which the first owner cannot finish', async () => {
      const { store } = await open();
      await store.push.enqueue([delivery('d1', { next_at: at(1) }), delivery('d2', { next_at: at(2) })]);
      await store.push.claim('owner_a', at(10), at(40), 10, GW);
      const again = await store.push.claim('owner_b', at(40), at(70), 10, GW);
      expect(again.map((d) => [d.delivery_id, d.lease_owner, d.attempts])).toEqual([
        ['d1', 'owner_b', 2],
        ['d2', 'owner_b', 2],
      ]);
      expect(await store.push.finish('d1', 'owner_a', { status: 'delivered', at: at(41) })).toBe(false);
      expect(await store.push.delivery('d1')).toMatchObject({ status: 'delivering', lease_owner: 'owner_b' });

      expect(await store.push.finish('d1', 'owner_b', { status: 'delivered', at: at(42) })).toBe(true);
      expect(await store.push.delivery('d1')).toStrictEqual(delivery('d1', { next_at: at(1), status: 'delivered', attempts: 2, delivered_at: at(42) }));
      expect(await store.push.finish('d1', 'owner_b', { status: 'pending', at: at(43) })).toBe(false); // no longer held

      expect(await store.push.finish('d2', 'owner_b', { status: 'pending', next_at: at(100), last_error: 'HTTP 503', at: at(42) })).toBe(true);
      expect(await store.push.delivery('d2')).toStrictEqual(delivery('d2', { next_at: at(100), attempts: 2, last_error: 'HTTP 503' }));
      expect(await store.push.claim('owner_c', at(99), at(130), 10, GW)).toEqual([]);
      const retried = await store.push.claim('owner_c', at(100), at(130), 10, GW);
      expect(retried).toMatchObject([{ delivery_id: 'd2', attempts: 3, last_error: 'HTTP 503' }]);
      // A retry that succeeds clears the previous error.
      expect(await store.push.finish('d2', 'owner_c', { status: 'delivered', at: at(101) })).toBe(true);
      expect(await store.push.delivery('d2')).toMatchObject({ status: 'delivered', last_error: null, delivered_at: at(101), lease_until: null });
      await store.close();
    });

    it("gateways sharing the store claim only their own gateway's deliveries (and deliveries that name none)", async () => {
      const { store } = await open();
      await store.push.enqueue([delivery('a', { next_at: at(1) }), delivery('legacy', { next_at: at(2), gateway_id: null }), delivery('b', { next_at: at(3), gateway_id: 'actor_baton_b' })]);
      const ids = (rows: DeliveryRow[]) => rows.map((d) => d.delivery_id);
      expect(ids(await store.push.claim('node_b', at(10), at(40), 10, 'actor_baton_b'))).toEqual(['legacy', 'b']);
      expect(await store.push.delivery('a')).toStrictEqual(delivery('a', { next_at: at(1) })); // untouched: pending, no try
      expect(await store.push.claim('node_c', at(10), at(40), 10, 'actor_baton_c')).toEqual([]);
      expect(await store.push.claim('node_a', at(10), at(40), 10, GW)).toStrictEqual([delivery('a', { next_at: at(1), status: 'delivering', attempts: 1, lease_owner: 'node_a', lease_until: at(40) })]);
      // Once every lease lapses, B's own row stays B's; the legacy row is anyone's.
      expect(ids(await store.push.claim('node_a', at(40), at(70), 10, GW))).toEqual(['a', 'legacy']);
      expect(await store.push.delivery('b')).toMatchObject({ status: 'delivering', lease_owner: 'node_b', attempts: 1 });
      await store.close();
    });

    it('requeues only a dead delivery: pending again, tries reset, error kept', async () => {
      const { store } = await open();
      await store.push.enqueue([delivery('d1')]);
      expect(await store.push.requeue('d1', at(50))).toBe(false);
      await store.push.claim('owner_a', at(1), at(30), 1, GW);
      expect(await store.push.requeue('d1', at(50))).toBe(false);
      expect(await store.push.finish('d1', 'owner_a', { status: 'dead', last_error: 'HTTP 410', at: at(2) })).toBe(true);
      expect(await store.push.requeue('d1', at(50))).toBe(true);
      expect(await store.push.delivery('d1')).toStrictEqual(delivery('d1', { next_at: at(50), last_error: 'HTTP 410' }));
      expect(await store.push.requeue('d1', at(60))).toBe(false);
      expect(await store.push.requeue('missing', at(60))).toBe(false);
      await store.close();
    });

    it('retention stubs the body of delivered and dead deliveries created before the cut-off, never a pending or delivering one; requeue refuses a purged one', async () => {
      const { store } = await open();
      const secret = (id: string) => `{"id":"${id}","artifact":"ARTIFACT-MARKER-${id}"}`;
      const ids = ['done', 'dead', 'pend', 'busy', 'late'];
      await store.push.enqueue(ids.map((id) => delivery(id, { body: secret(id), next_at: at(1), created_at: id === 'late' ? at(20) : at(1) })));
      await store.push.claim('owner_a', at(2), at(100), 10, GW); // all five delivering
      await store.push.finish('done', 'owner_a', { status: 'delivered', at: at(3) });
      await store.push.finish('dead', 'owner_a', { status: 'dead', last_error: 'HTTP 410', at: at(3) });
      await store.push.finish('pend', 'owner_a', { status: 'pending', next_at: at(50), at: at(3) });
      await store.push.finish('late', 'owner_a', { status: 'delivered', at: at(21) });
      expect(await store.push.purgeBodies(at(10), 'rp_1%_x')).toBe(2);
      expect(await store.push.purgeBodies(at(10), 'rp_2')).toBe(0); // a stubbed body is not stubbed again
      const rows = Object.fromEntries(await Promise.all(ids.map(async (id) => [id, (await store.push.delivery(id))!] as const)));
      expect(rows.done).toMatchObject({ status: 'delivered', body: purgedBody('rp_1%_x') });
      expect(rows.dead).toMatchObject({ status: 'dead', body: purgedBody('rp_1%_x'), last_error: 'HTTP 410' });
      // Still to be sent: the same bytes at every try. Created after the cut-off: kept until a later purge.
      for (const id of ['pend', 'busy', 'late']) expect(rows[id]!.body).toBe(secret(id));
      expect(isPurgedBody(rows.dead!.body) && !isPurgedBody(rows.late!.body)).toBe(true);
      expect(await store.push.requeue('dead', at(60))).toBe(false);
      expect(await store.push.delivery('dead')).toMatchObject({ status: 'dead' });
      expect(await store.push.claim('owner_b', at(200), at(300), 10, GW)).toMatchObject([{ delivery_id: 'busy' }, { delivery_id: 'pend' }]);
      await store.close();
    });

    it('lists deliveries newest first, filtered by status and task, with the limit clamped', async () => {
      const { store } = await open();
      await store.push.enqueue([
        delivery('a', { created_at: at(1), task_id: 't1' }),
        delivery('b', { created_at: at(2), task_id: 't2' }),
        delivery('c', { created_at: at(2), task_id: 't1' }),
        delivery('d', { created_at: at(3), task_id: 't1', status: 'dead', last_error: 'x' }),
      ]);
      const ids = (rows: DeliveryRow[]) => rows.map((r) => r.delivery_id);
      expect(ids(await store.push.deliveries({ limit: 10 }))).toEqual(['d', 'c', 'b', 'a']);
      expect(ids(await store.push.deliveries({ status: 'pending', limit: 10 }))).toEqual(['c', 'b', 'a']);
      expect(ids(await store.push.deliveries({ task_id: 't1', limit: 10 }))).toEqual(['d', 'c', 'a']);
      expect(ids(await store.push.deliveries({ task_id: 't1', status: 'pending', limit: 10 }))).toEqual(['c', 'a']);
      expect(ids(await store.push.deliveries({ limit: 0 }))).toEqual(['d']);
      expect(ids(await store.push.deliveries({ limit: 2 }))).toEqual(['d', 'c']);
      expect(await store.push.deliveries({ status: 'delivering', limit: 10 })).toEqual([]);
      expect(typeof (await store.push.deliveries({ limit: 1 }))[0]?.attempts).toBe('number');
      await store.close();
    });

    it('never hands one delivery to two claimers on separate connections', async () => {
      const { store, twin } = await open();
      const other = await twin();
      const total = 200;
      await store.push.enqueue(Array.from({ length: total }, (_, i) => delivery(`r${String(i).padStart(3, '0')}`, { next_at: at(i % 7) })));
      const claimed: string[] = [];
      const claimer = async (s: Store, owner: string) => {
        for (;;) {
          const rows = await s.push.claim(owner, at(10), at(1000), 3, GW);
          if (rows.length === 0) return;
          for (const r of rows) {
            expect(r).toMatchObject({ lease_owner: owner, attempts: 1 });
            claimed.push(r.delivery_id);
          }
        }
      };
      // Several loops per store, so PostgreSQL sees truly concurrent statements from both pools.
      await Promise.all([store, other].flatMap((s, i) => [0, 1, 2].map((j) => claimer(s, `owner_${i}_${j}`))));
      expect(claimed).toHaveLength(total);
      expect(new Set(claimed).size).toBe(total);
      expect(await store.push.deliveries({ status: 'pending', limit: 1000 })).toEqual([]);
      await other.close();
      await store.close();
    });

    it('reports a closed store as storage_error', async () => {
      const { store } = await open();
      await store.close();
      await expectCodeAsync(store.push.config('att_1', 'a'), 'storage_error');
      await expectCodeAsync(store.push.claim('o', at(1), at(2), 1, GW), 'storage_error');
    });
  });
}
