/** Opens the configured store for one CLI command and always closes it. */
import type { Store } from '../store/port.ts';
import type { CliContext } from './context.ts';

export async function withStore<T>(ctx: CliContext, fn: (store: Store) => Promise<T>): Promise<T> {
  const { openStore } = await import('../store/open.ts'); // loaded when a command runs, not when the CLI starts
  const store = await openStore(ctx.config(), { create: false });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
