/**
 * The `content` table: message and task-view content kept apart from the
 * immutable records, which hold only its digest (src/records/detached.ts).
 * Content is written once per digest with the record that names it; retention
 * purges it (the document becomes NULL, the purge and its record are noted)
 * and never deletes the row, so `baton audit verify` can tell content purged
 * by retention from content missing or tampered with. SQL shared by both
 * adapters, as work-sql.ts and push-sql.ts are.
 */
import type { PushDialect } from './push-sql.ts';
import { storageError } from '../errors.ts';
import { sha256Digest } from '../records/digest.ts';

/** Migration 9 in both dialects; `strict` is ' STRICT' for SQLite. */
export const contentTablesSql = (strict: string) => `
  CREATE TABLE content (
    digest       TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('task_input', 'task_view')),
    document     TEXT,
    stored_at    TEXT NOT NULL,
    purged_at    TEXT,
    purge_ref    TEXT,
    CHECK ((document IS NULL) = (purged_at IS NOT NULL)),
    CHECK ((purged_at IS NULL) = (purge_ref IS NULL))
  )${strict};
  CREATE INDEX content_by_stored_at ON content(stored_at) WHERE document IS NOT NULL;
`;

/** Inside a record's write transaction: the same digest is the same content, stored once (first stored_at wins). */
export const INSERT_CONTENT_SQL = (p: (n: number) => string) =>
  `INSERT INTO content(digest, kind, document, stored_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}) ON CONFLICT (digest) DO NOTHING`;

export interface ContentRow {
  digest: string;
  kind: string;
  document: string | null;
  stored_at: string;
  purged_at: string | null;
  purge_ref: string | null;
}

export interface ContentStore {
  get(digest: string): Promise<ContentRow | undefined>;
  /** Purges every document stored before `before`, naming the purge record; resolves with how many. */
  purge(before: string, purgeRef: string, at: string): Promise<number>;
  /** How much content is held and how much has been purged. */
  stats(): Promise<{ stored: number; purged: number }>;
  /** Rows ordered by digest after `after` (for the audit). */
  scan(after: string | undefined, limit: number): Promise<ContentRow[]>;
  /**
   * After a purge: lets the engine drop older copies of purged bytes. SQLite
   * checkpoints the WAL and truncates it (with secure_delete on, freed cells
   * are already zeroed); resolves false when a reader kept some WAL frames.
   * PostgreSQL does nothing beyond the UPDATE (README "Data retention").
   */
  reclaim(): Promise<boolean>;
}

const COLUMNS = 'digest, kind, document, stored_at, purged_at, purge_ref';

export function composeContent({ p, all }: Pick<PushDialect, 'p' | 'all'>, reclaim: () => Promise<boolean>): ContentStore {
  return {
    reclaim,
    get: async (digest) => {
      const row = (await all<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE digest = ${p(1)}`, [digest]))[0];
      // Stored bytes are checked on every read, as records are (src/records/decode.ts): a flipped bit on disk is
      // storage_error, never a message or task view someone is shown or acts on. The digest is of these very bytes.
      if (typeof row?.document === 'string' && sha256Digest(row.document) !== row.digest) throw storageError('stored content does not match its digest', { digest: row.digest });
      return row;
    },
    purge: async (before, purgeRef, at) =>
      (await all(`UPDATE content SET document = NULL, purged_at = ${p(2)}, purge_ref = ${p(3)} WHERE stored_at < ${p(1)} AND document IS NOT NULL RETURNING digest`, [before, at, purgeRef])).length,
    stats: async () => {
      const [r] = await all<{ stored: unknown; purged: unknown }>('SELECT count(document) AS stored, count(purged_at) AS purged FROM content', []);
      return { stored: Number(r?.stored ?? 0), purged: Number(r?.purged ?? 0) };
    },
    scan: async (after, limit) =>
      after === undefined
        ? all<ContentRow>(`SELECT ${COLUMNS} FROM content ORDER BY digest LIMIT ${p(1)}`, [Math.max(1, Math.min(limit, 10_000))])
        : all<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE digest > ${p(1)} ORDER BY digest LIMIT ${p(2)}`, [after, Math.max(1, Math.min(limit, 10_000))]),
  };
}
