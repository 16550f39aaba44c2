/**
 * How many copies of its text a sealed record keeps (issue #24). A record's
 * text holds its body's whole; the body's own kept text is a slice of the
 * record's (src/records/canonical.ts `lendText`), and a freshly signed
 * contract keeps no separate signing text (src/contracts/signing.ts): one
 * flat copy per record, where a contract held three (body, sealed, signed).
 * Counted in a heap snapshot of this worker, never timed.
 */
import { getHeapSnapshot } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { DelegationContract } from '../../src/contracts/model.ts';
import { sealContract } from '../../src/contracts/signing.ts';
import { canonicalText, knownText } from '../../src/records/canonical.ts';
import { sealRecord } from '../../src/records/envelope.ts';
import { world } from '../contracts/fixtures.ts';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/**
 * Flat strings of at least `minLength` bytes (one byte a character here) that
 * hold `marker`, live after the collection a snapshot begins with. V8 names a
 * flat string node by its first 1,024 characters, so the marker must come
 * early; slices and ropes are named by their kind alone, so they do not count.
 */
async function flatCopies(marker: string, minLength: number): Promise<number> {
  let json = '';
  for await (const chunk of getHeapSnapshot()) json += String(chunk);
  const s = JSON.parse(json) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const types = s.snapshot.meta.node_types[0];
  let n = 0;
  for (let i = 0; i < s.nodes.length; i += fields.length) {
    if (types[s.nodes[i + type]!] === 'string' && s.nodes[i + size]! >= minLength && s.strings[s.nodes[i + name]!]!.includes(marker)) n++;
  }
  return n;
}

describe('texts a sealed record keeps', () => {
  it('a signed contract keeps one flat copy of its text: its body and its signing text do not hold their own', async () => {
    const w = await world();
    const root = (await w.issue()).contract;
    const marker = `zz-kept-${process.pid}-${Date.now()}`;
    // The marker in the body's first member, so it is within the first 1,024 characters of every text holding the body.
    const body = { ...root.body, accountable_operator_ref: { ...root.body.accountable_operator_ref, object_id: marker }, delegation_id: 'dlg_kept' };
    const signed: DelegationContract = await sealContract({ body }, w.mintDeps);
    const text = canonicalText(signed); // as the store writes it
    expect(text.length).toBeGreaterThan(2_000);
    // Read, as hashing or binding reads it: a rope (what JSON.stringify gives) is flattened, a slice is not copied.
    expect(text).toContain(knownText(signed.body)!);
    expect(await flatCopies(marker, 1_000)).toBe(1);
    expect(knownText(signed.body)).toBe(canonicalText({ ...signed.body }));
  });

  it('a sealed record keeps one: its body lends its text from the record', async () => {
    const marker = `zz-sealed-${process.pid}-${Date.now()}`;
    const body = { a_first: marker, items: Array.from({ length: 40 }, (_, i) => ({ index: i, note: 'x'.repeat(40) })) };
    const record = sealRecord({ type: 'task_input', body, issuedBy: { object_id: 'actor_t', revision_id: 'r1', content_digest: `sha256:${'0'.repeat(64)}` }, lifecycle: 'recorded' }, { ids: { next: (p) => `${p}_1` }, clock: { now: () => new Date(0) } });
    const text = canonicalText(record);
    expect(knownText(record.body)).toContain(marker); // read, as above
    expect(await flatCopies(marker, 1_000)).toBe(1);
    expect(text.slice(8, 8 + knownText(record.body)!.length)).toBe(knownText(record.body)); // '{"body":' comes first
  });
});
