/**
 * A separate process that opens (and so migrates) the SQLite store at argv[2]
 * once the parent writes a line, then prints {opened: schema version} or
 * {code} and exits: several of them opening one database at once race for its
 * migrations (test/store/sqlite-records-upgrade.test.ts).
 */
import { isBatonError } from '../../../src/errors.ts';
import { SqliteStore } from '../../../src/store/sqlite/store.ts';

const say = (msg: unknown) => process.stdout.write(`${JSON.stringify(msg)}\n`);
say({ ready: true });
process.stdin.once('data', () => {
  try {
    const store = SqliteStore.open(process.argv[2]!);
    const { v } = store.handle.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: bigint };
    say({ opened: Number(v) });
    void store.close().then(() => process.exit(0));
  } catch (err) {
    say({ code: isBatonError(err) ? err.code : 'crash', message: String(err) });
    process.exit(1);
  }
});
