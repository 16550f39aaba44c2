import { afterAll, describe } from 'vitest';
import { PgStore } from '../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { fenceDowngradeSuite } from './fence-downgrade-suite.ts';

// One gateway on PostgreSQL; the federation mixed: A on SQLite, B (whose verdict is checked) on PostgreSQL.
describe.skipIf(!PG_URL)('postgres', () => {
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  fenceDowngradeSuite('postgres', async () => {
    const [world, b] = [await freshSchema(), await freshSchema()];
    schemas.push(world, b);
    return { store: { kind: 'postgres', url: world.url }, open: () => PgStore.open(world.url, { max: 2 }), pgUrls: { 1: b.url } };
  });
});
