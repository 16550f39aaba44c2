import { describe } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from '../store/support/pg.ts';
import { treePageSuite } from './tree-page-suite.ts';

describe.skipIf(!PG_URL)('postgres', () => {
  treePageSuite('postgres', async () => {
    const db = await freshSchema();
    const store = await PgStore.open(db.url, { max: 2 });
    return { store, close: async () => (await store.close(), await db.drop()) };
  });
});
