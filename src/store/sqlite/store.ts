/** The SQLite adapter of the storage port: the embedded default. */
import { storageError } from '../../errors.ts';
import type { Store } from '../port.ts';
import { openDatabase, type Db, type OpenOptions } from './database.ts';
import { SqliteRecords } from './records.ts';

export class SqliteStore extends SqliteRecords implements Store {
  private constructor(db: Db) {
    super(db);
  }

  /** The underlying handle, for adapters of other domain operations on the same file. */
  get handle(): Db {
    return this.db;
  }

  static open(path: string, opts: OpenOptions = {}): SqliteStore {
    return new SqliteStore(openDatabase(path, opts));
  }

  async ping(): Promise<void> {
    try {
      this.db.prepare('SELECT 1').get();
    } catch (cause) {
      throw storageError('database is not answering', {}, cause);
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
