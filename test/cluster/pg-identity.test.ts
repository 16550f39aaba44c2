import { afterAll, describe } from 'vitest';
import { freshSchema, PG_URL } from '../store/support/pg.ts';
import { clusterIdentitySuite } from './identity-suite.ts';

describe.skipIf(!PG_URL)('postgres', () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const d of drops) await d();
  });
  clusterIdentitySuite('postgres', async () => {
    const db = await freshSchema();
    drops.push(db.drop);
    return { kind: 'postgres', url: db.url };
  });
});
