/**
 * The caller-side leak check (issue #14): no response body a caller ever
 * received may name a delegatee's task or context id, or carry the
 * Delegation Contract extension Baton attaches downstream (RW-003 §10.3:
 * remote ids never stand in for Baton's; the chain is for the delegatee).
 */
import { expect } from 'vitest';
import type { AttemptBody } from '../../src/attempts/record.ts';
import { schemaRefFor } from '../../src/records/schema-ref.ts';
import type { Store } from '../../src/store/port.ts';

export const CONTRACT_EXTENSION_KEY = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
/**
 * The extension used as a metadata key (where the chain travels). Cards
 * legitimately declare the extension's URI as a value (A2A §4.4.4).
 */
const CONTRACT_KEY_NEEDLE = `"${CONTRACT_EXTENSION_KEY}":`;

/** Every downstream id Baton recorded for any attempt (task and context ids), through the store port (SQLite or PostgreSQL). */
export async function downstreamIds(store: Store): Promise<string[]> {
  const ids = new Set<string>();
  let cursor: string | undefined;
  // Bounded: 50 pages of 200 attempts is far more than any suite runs.
  for (let page = 0; page < 50; page++) {
    const { records, cursor: next } = await store.listCurrent(schemaRefFor('execution_attempt'), { limit: 200, ...(cursor ? { cursor } : {}) });
    for (const r of records) {
      const remote = (r.body as unknown as AttemptBody).remote;
      if (remote.task_id) ids.add(remote.task_id);
      if (remote.context_id) ids.add(remote.context_id);
    }
    if (!next) break;
    cursor = next;
  }
  return [...ids];
}

/** The hits of `needles` in `bodies`: `[needle, body excerpt]` pairs (empty when clean). */
export function leaks(bodies: readonly string[], needles: readonly string[]): Array<[string, string]> {
  const hits: Array<[string, string]> = [];
  for (const body of bodies) {
    for (const n of needles) {
      const at = body.indexOf(n);
      if (at >= 0) hits.push([n, body.slice(Math.max(0, at - 120), at + n.length + 40)]);
    }
  }
  return hits;
}

/**
 * Fails on any recorded body naming a downstream id or the contract
 * extension; also insists the check saw something (a silent recorder
 * would otherwise pass it vacuously).
 */
export async function assertNoDownstreamLeaks(world: { bodies: string[]; pending: Array<Promise<unknown>>; store(): Store | Promise<Store> }): Promise<void> {
  // Bodies are recorded as they arrive; give reads in flight a bounded moment to land (a stream still open is checked as far as it got).
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(world.pending), new Promise((r) => (timer = setTimeout(r, 5_000)))]);
  clearTimeout(timer);
  const store = await world.store();
  let ids: string[];
  try {
    ids = await downstreamIds(store);
  } finally {
    await store.close();
  }
  expect(world.bodies.length).toBeGreaterThan(0);
  expect(ids.length).toBeGreaterThan(0);
  expect(leaks(world.bodies, [...ids, CONTRACT_KEY_NEEDLE, `"schema_ref":"${schemaRefFor('delegation_contract')}"`])).toEqual([]);
}
