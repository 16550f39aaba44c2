import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { fenceDowngradeSuite } from './fence-downgrade-suite.ts';

// One gateway on its SQLite file; the federation with both organisations on SQLite.
fenceDowngradeSuite('sqlite', async () => ({ open: async (w) => SqliteStore.open(join(w.dir, 'baton.db')) }));
