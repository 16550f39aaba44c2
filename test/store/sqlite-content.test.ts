/**
 * Content kept apart from its records (a caller's message, a task view) is
 * checked against its digest on every read, as records are: a flipped bit on
 * disk is storage_error, never a message or view someone is shown or acts on.
 * Purged content (document NULL) has nothing to check and reads as purged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../../src/errors.ts';
import { sha256Digest } from '../../src/records/digest.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';

describe('sqlite: content read back', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-content-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers content whose bytes match their digest, refuses content whose bytes do not, and reads purged content as purged', async () => {
    const store = SqliteStore.open(join(dir, 'content.db'), { create: true });
    try {
      const insert = store.handle.prepare('INSERT INTO content(digest, kind, document, stored_at, purged_at, purge_ref) VALUES (?, ?, ?, ?, ?, ?)');
      const at = new Date().toISOString();
      const good = '{"parts":[{"text":"hello"}],"role":"ROLE_USER"}';
      insert.run(sha256Digest(good), 'task_input', good, at, null, null);
      expect(await store.content.get(sha256Digest(good))).toMatchObject({ document: good, kind: 'task_input' });

      const stored = '{"parts":[{"text":"hellp"}],"role":"ROLE_USER"}'; // one bit off the bytes the digest was taken of
      insert.run(sha256Digest('{"parts":[{"text":"hellq"}],"role":"ROLE_USER"}'), 'task_view', stored, at, null, null);
      const err = await store.content.get(sha256Digest('{"parts":[{"text":"hellq"}],"role":"ROLE_USER"}')).catch((e: unknown) => e);
      expect(isBatonError(err, 'storage_error')).toBe(true);
      expect(err).toMatchObject({ message: 'stored content does not match its digest' });

      const purged = sha256Digest('{"gone":true}');
      insert.run(purged, 'task_view', null, at, at, 'rec_purge_1');
      expect(await store.content.get(purged)).toMatchObject({ document: null, purged_at: at });
      expect(await store.content.get(sha256Digest('never stored'))).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
