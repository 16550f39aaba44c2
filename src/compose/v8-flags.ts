/**
 * V8 flags the gateway sets for its own process when it starts serving
 * (issue #24).
 *
 * `--no-allocation-site-pretenuring`. V8 allocates the objects of an
 * allocation site straight into the old generation once enough of them
 * outlived a scavenge. A delegated call's objects live as long as the call
 * (11 ms at c=1, about 130 ms at c=32), long enough under load for many
 * sites to be pretenured. When the call ends those objects are dead, but only
 * a full collection can tell: until then every scavenge treats their
 * references as live, so the younger objects of the same call (its records,
 * their texts, the request's router and logger state) survive it and are
 * promoted in turn. Measured with --trace-gc-nvp over 8 s at steady load:
 * c=1 promoted 145 -> 85 KB a call, scavenge 0.36 -> 0.30 ms a call; c=32
 * 137 -> 96 KB, 0.32 -> 0.28 ms. bench/ab-interleave.ts, gateway CPU a call,
 * without / with: 7.42 / 6.16 ms at c=1 (median round 0.83), 4.54 / 4.35 ms
 * at c=32 (0.96). An operator who wants V8's default starts node with
 * `--allocation-site-pretenuring`, which this leaves alone.
 */
import { setFlagsFromString } from 'node:v8';

/** What the gateway sets, each unless node was started with that flag (either way). */
export const GATEWAY_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];

/** V8 spells a flag with `-` or `_`, and negates it with `--no-`. */
const nameOf = (flag: string): string => flag.replace(/^--(no-?)?/, '').replace(/=.*$/, '').replace(/_/g, '-');

/** The flags of {@link GATEWAY_V8_FLAGS} that `execArgv` (node's own options) does not already decide. */
export function v8FlagsFor(execArgv: readonly string[]): string[] {
  const given = new Set(execArgv.filter((a) => a.startsWith('--')).map(nameOf));
  return GATEWAY_V8_FLAGS.filter((f) => !given.has(nameOf(f)));
}

/** Sets them; returns what it set. Called once a process starts serving, before the request path allocates. */
export function applyV8Flags(execArgv: readonly string[] = process.execArgv): string[] {
  const flags = v8FlagsFor(execArgv);
  for (const f of flags) setFlagsFromString(f);
  return flags;
}
