/**
 * bench/profile.ts's summary of a .cpuprofile: self time by area (the leaf's
 * own place), and by owner, where a sample in Node's internals or native code
 * is charged to the nearest package or src/ directory on its stack. A
 * synthetic profile, so each share is known exactly.
 */
import { describe, expect, it } from 'vitest';
import { summariseProfile } from '../../bench/profile.ts';
import { ROOT } from '../../bench/lib/proc.ts';

const src = (file: string) => `file://${ROOT}src/${file}`;
const frames = {
  root: { functionName: '(root)', url: '', lineNumber: -1 },
  sign: { functionName: 'sign', url: src('records/signature.ts'), lineNumber: 10 },
  oneShot: { functionName: 'signOneShot', url: 'node:internal/crypto/sig', lineNumber: 142 },
  native: { functionName: '', url: '', lineNumber: -1 },
  parse: { functionName: 'parse', url: `file://${ROOT}node_modules/zod/v4/core/schemas.js`, lineNumber: 5 },
  writev: { functionName: 'writevGeneric', url: 'node:internal/stream_base_commons', lineNumber: 122 },
  gc: { functionName: '(garbage collector)', url: '', lineNumber: -1 },
  idle: { functionName: '(idle)', url: '', lineNumber: -1 },
};

// root → sign → signOneShot → (native); root → parse → (native); root → writev (no owner above it); root → GC; root → idle.
const profile = {
  startTime: 0,
  endTime: 100,
  nodes: [
    { id: 1, callFrame: frames.root, children: [2, 5, 7, 8, 9] },
    { id: 2, callFrame: frames.sign, children: [3] },
    { id: 3, callFrame: frames.oneShot, children: [4] },
    { id: 4, callFrame: frames.native },
    { id: 5, callFrame: frames.parse, children: [6] },
    { id: 6, callFrame: frames.native },
    { id: 7, callFrame: frames.writev },
    { id: 8, callFrame: frames.gc },
    { id: 9, callFrame: frames.idle },
  ],
  // One sample per ms: 4 in the native code under signOneShot, 1 in signOneShot itself, 1 in sign, 2 under zod, 1 writev, 1 GC, 10 idle.
  samples: [4, 4, 4, 4, 3, 2, 6, 6, 7, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9],
  timeDeltas: new Array(21).fill(1000),
};

describe('bench profile summary', () => {
  it('charges native and node-internal samples to the nearest package or src/ directory that called them', () => {
    const s = summariseProfile(profile, 10);
    expect(s.busyMs).toBe(10);
    const shares = (rows: Array<{ area: string; pct: number }>) => Object.fromEntries(rows.map((r) => [r.area, r.pct]));
    expect(shares(s.byArea)).toEqual({ '(native/builtin)': 60, 'node: internals': 20, 'src/records/': 10, '(garbage collector)': 10 });
    expect(shares(s.byOwner!)).toEqual({ 'src/records/': 60, zod: 20, 'node: internals': 10, '(garbage collector)': 10 });
  });
});
