/**
 * A separate OS process that talks to the same ledger as the test. Modes:
 *   race     — admit 1 unit at a time until the budget refuses; print the count.
 *   fenced   — like race, but each try fences on the current heads first and
 *              reports when it started, so a revocation race can be judged;
 *              prints {progress} once it has been granted a few times.
 *   hold     — admit once, print the reservation, then wait to be killed.
 *   dispatch — admit, send the effect to a loopback receiver, then wait to be killed.
 *   churn    — admit and settle as fast as possible until killed; prints
 *              {settled} once a few have settled.
 *   preset   — open new tasks under one owner preset (root and admission in one
 *              transaction) `arg` times; print how many the preset's limits let in.
 */
import { request } from 'node:http';
import { isBatonError } from '../../../src/errors.ts';
import type { Store } from '../../../src/store/port.ts';
import { PgStore } from '../../../src/store/postgres/store.ts';
import { SqliteStore } from '../../../src/store/sqlite/store.ts';
import { admission, NOW, presetTask } from './fixtures.ts';

const [mode, kind, where, space, chainJson, arg] = process.argv.slice(2) as [string, string, string, string, string, string | undefined];
const ids: string[] = JSON.parse(chainJson);
const leaf = ids[ids.length - 1]!;

const store: Store = kind === 'pg' ? await PgStore.open(where, { max: 2 }) : SqliteStore.open(where);
/** fenced and churn report once after this many admissions, then keep going. */
const PROGRESS_AFTER = 5;
const say = (msg: unknown) => process.stdout.write(`${JSON.stringify(msg)}\n`);

/** Resolves when the parent writes a line: a start barrier so every racer begins together. */
const barrier = () =>
  new Promise<void>((resolve) => {
    say({ ready: true });
    process.stdin.once('data', () => resolve());
  });

if (mode === 'race' || mode === 'fenced') {
  await barrier();
  process.stdin.unref();
  let granted = 0;
  let refusedInARow = 0;
  const starts: number[] = [];
  // When this process was contending for the ledger: from its first try to the end of its last.
  const from = Date.now();
  for (let i = 0; i < Number(arg ?? 1000); i++) {
    const started = Date.now();
    try {
      await store.ledger.admit(await admission(store, space, ids, leaf));
      granted++;
      refusedInARow = 0;
      starts.push(started);
      // fenced: tells the parent this racer is admitting, so it revokes mid-run (no sleep).
      if (mode === 'fenced' && granted === PROGRESS_AFTER) say({ progress: granted });
    } catch (err) {
      if (isBatonError(err, 'limit_exceeded') || isBatonError(err, 'context_invalidated')) {
        // race: the budget is gone; fenced: keep trying a little past the revocation, then stop.
        if (mode === 'race' || ++refusedInARow >= 5) break;
        continue;
      }
      throw err;
    }
  }
  say({ granted, starts, from, to: Date.now() });
  await store.close();
} else if (mode === 'preset') {
  await barrier();
  // At least `arg` tries, and on until the parent says stop — which it does only once every racer reported its
  // first try: every process is then opening tasks while every other one is, however the machine schedules them.
  let stop = false;
  process.stdin.on('data', () => (stop = true));
  const preset = JSON.parse(chainJson) as { preset_id: string; max_active_roots: number; max_per_minute: number };
  let admitted = 0;
  let refused = 0;
  const from = Date.now();
  for (let i = 0; i < 100_000 && (i < Number(arg ?? 10) || !stop); i++) {
    try {
      await presetTask(store, space, preset).run();
      admitted++;
    } catch (err) {
      if (!isBatonError(err, 'limit_exceeded')) throw err;
      refused++;
    }
    if (i === 0) say({ progress: 1 });
  }
  process.stdin.unref();
  say({ admitted, refused, from, to: Date.now() });
  await store.close();
} else if (mode === 'hold' || mode === 'dispatch') {
  const req = await admission(store, space, ids, leaf, { units: 2n });
  await store.ledger.admit(req);
  say({ reserved: req.reservation_id, effect: req.effect_id });
  if (mode === 'dispatch') {
    await new Promise<void>((resolve, reject) => {
      const r = request(arg!, { method: 'POST' }, (res) => (res.resume(), res.on('end', resolve)));
      r.on('error', reject);
      r.end(req.effect_id);
    });
    say({ dispatched: req.effect_id });
  }
  setInterval(() => {}, 1 << 30); // wait for SIGKILL
} else if (mode === 'churn') {
  say({ ready: true });
  let settled = 0;
  for (;;) {
    const req = await admission(store, space, ids, leaf);
    try {
      await store.ledger.admit(req);
      await store.ledger.settle({ reservation_id: req.reservation_id, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, at: NOW() });
      // Tells the parent the churn is under way, so its kill lands mid-run (no sleep).
      if (++settled === PROGRESS_AFTER) say({ settled });
    } catch (err) {
      if (!isBatonError(err, 'limit_exceeded')) throw err;
    }
  }
}
