import { SqliteStore } from '../src/store/sqlite/store.ts';
import { countSqlite } from '../test/helpers/sql-tally.ts';
import { statementsSuite } from './statements-suite.ts';

statementsSuite('sqlite', async () => ({
  open: async (path) => {
    const { tally } = countSqlite();
    return { store: SqliteStore.open(path, { create: true }), tally };
  },
}));
