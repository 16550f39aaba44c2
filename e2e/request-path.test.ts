import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { requestPathSuite } from './request-path-suite.ts';

// Two gateway processes on one SQLite file.
requestPathSuite('sqlite', async () => ({ open: async (w) => SqliteStore.open(join(w.dir, 'baton.db')) }));
