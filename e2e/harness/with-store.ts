import type { Store } from '../../src/store/port.ts';

/** Opens a store beside the running gateways for `fn`, always closing it. */
export async function withStore<T>(open: () => Promise<Store>, fn: (s: Store) => Promise<T>): Promise<T> {
  const s = await open();
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}
