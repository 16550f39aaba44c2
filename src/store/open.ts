/** Picks the storage adapter the configuration names. */
import type { Config } from '../config.ts';
import { resolvedPaths } from '../config.ts';
import { unsupported } from '../errors.ts';
import type { Store } from './port.ts';
import { PgStore } from './postgres/store.ts';
import { SqliteStore } from './sqlite/store.ts';

export async function openStore(config: Config, opts: { create?: boolean } = {}): Promise<Store> {
  if (config.store.kind === 'sqlite') return SqliteStore.open(resolvedPaths(config).sqlite, { create: opts.create ?? true });
  if (config.store.kind === 'postgres') {
    const { url, preparedStatements, analyzeEvery } = config.store;
    return PgStore.open(url, { preparedStatements: preparedStatements ?? true, ...(analyzeEvery !== undefined ? { analyzeEvery } : {}) });
  }
  throw unsupported('unknown store kind');
}
