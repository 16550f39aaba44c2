/** A gateway's files are private from the first start: directories 0700, database, keys and push secret 0600. */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { startGateway } from '../../src/main.ts';

const root = mkdtempSync(join(tmpdir(), 'baton-modes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (p: string) => statSync(p).mode & 0o777;

it('creates the data and key directories 0700 and every file in them 0600', async () => {
  const dataDir = join(root, 'nested', 'data');
  const gw = await startGateway(Config.parse({ port: 0, dataDir, logLevel: 'silent' }));
  try {
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, 'keys'))).toBe(0o700);
    for (const f of ['baton.db', 'baton.db.initialized', 'baton.db-wal']) expect([f, mode(join(dataDir, f))]).toEqual([f, 0o600]);
    const keys = readdirSync(join(dataDir, 'keys'));
    expect(keys.length).toBeGreaterThanOrEqual(3); // two signing keys and the push secret
    for (const f of keys) expect([f, mode(join(dataDir, 'keys', f))]).toEqual([f, 0o600]);
  } finally {
    await gw.close();
  }
});
