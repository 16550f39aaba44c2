/**
 * Awaits a condition that another process or a background worker makes true
 * (a verdict committed, a lease taken over): polls `check` until it returns
 * something truthy. Bounded: `tries` × `everyMs`, then it fails the test
 * with what it was waiting for — never a fixed sleep standing in for "it happened".
 */
export async function until<T>(check: () => T | Promise<T>, tries = 250, everyMs = 20, what = 'condition'): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${what} not reached within ${tries * everyMs} ms`);
}
