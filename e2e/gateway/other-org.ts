/**
 * Another organisation's gateway on a world's store (README "one shared
 * ledger"): the world's config under its own identity (its cards renamed, as
 * e2e/gateway/two-orgs.ts does), keys and data directory, started in this
 * process so a test runs its sweeps when it says so.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/main.ts';
import { cardsFor } from './two-orgs.ts';

export async function otherOrgGateway(configFile: string, org: string): Promise<Gateway> {
  const raw = JSON.parse(readFileSync(configFile, 'utf8')) as { dataDir: string; store?: unknown };
  const dir = join(dirname(configFile), `org-${org}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'baton.json');
  const store = raw.store ?? { kind: 'sqlite', path: join(raw.dataDir, 'baton.db') };
  writeFileSync(file, JSON.stringify({ ...raw, dataDir: dir, cardsDir: cardsFor(dir, org), store }));
  return startGateway(loadConfig({ file, env: {} }), { logger: createLogger({ level: 'silent' }) });
}
