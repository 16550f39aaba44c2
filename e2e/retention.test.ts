import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { retentionSuite } from './retention-suite.ts';

// The gateway process on its SQLite file; a second handle opened beside it.
retentionSuite('sqlite', async () => ({
  open: async (w) => SqliteStore.open(join(w.dir, 'baton.db')),
  files: (w) => [join(w.dir, 'baton.db'), join(w.dir, 'baton.db-wal')],
  exec: async (w, sql, params) => {
    const s = SqliteStore.open(join(w.dir, 'baton.db'));
    try {
      s.handle.prepare(sql).run(...params);
    } finally {
      await s.close();
    }
  },
}));
