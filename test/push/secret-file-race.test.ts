/**
 * The push secret file appears whole or not at all (src/push/secret-box.ts
 * createOnce). Concurrent CLI commands on a fresh data dir once read it
 * between its creation and its write (CI: "push secret file is unreadable").
 * Here the first write to disk is held open and empty, as a slow disk or a
 * descheduled process would hold it, while a second process-like opener runs.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';

const hold = vi.hoisted(() => {
  let release!: () => void;
  let held!: () => void;
  return {
    released: new Promise<void>((r) => (release = r)),
    release: () => release(),
    isHeld: new Promise<void>((r) => (held = r)),
    held: () => held(),
    first: true,
  };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  return {
    ...real,
    // The first file written is created (visible, empty) and its content lands only when released.
    writeFile: async (path: string, data: string, opts: { mode?: number; flag?: string }) => {
      if (!hold.first) return real.writeFile(path, data, opts);
      hold.first = false;
      const h = await real.open(path, opts.flag ?? 'w', opts.mode);
      hold.held();
      await hold.released;
      await h.writeFile(data);
      await h.close();
    },
  };
});

const { SecretBox } = await import('../../src/push/secret-box.ts');

it('an opener that starts while another is still writing the secret never reads a half-written file; both end with the same secret', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-secret-held-'));
  const slow = SecretBox.open(dir, {});
  await hold.isHeld;
  const quick = await SecretBox.open(dir, {}); // with the file created in place, this read it empty: storage_error
  hold.release();
  const late = await slow;
  expect(late.inboundToken('x')).toBe(quick.inboundToken('x'));
  expect(readdirSync(dir), 'no temporary file left behind').toEqual(['push-secret']);
});
