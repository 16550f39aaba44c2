/**
 * The pure core's boundary is enforced by eslint.config.js; these cases
 * lint deliberate violations (and the allowed port imports) through the
 * project's own config, so a loosened pattern fails here, not in review.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function restricted(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('pure core import boundary', () => {
  const violations: Array<[string, string]> = [
    ['src/ledger/x.ts', "import { Dispatcher } from '../gateway/dispatcher.ts';\nexport const d = Dispatcher;\n"],
    ['src/control/x.ts', "import { Outbox } from '../push/outbox.ts';\nexport const o = Outbox;\n"],
    ['src/attempts/x.ts', "import { OperatorService } from '../operator/service.ts';\nexport const o = OperatorService;\n"],
    ['src/records/x.ts', "import { SqliteStore } from '../store/sqlite/store.ts';\nexport const s = SqliteStore;\n"],
    ['src/contracts/x.ts', "import { PostgresStore } from '../store/postgres/store.ts';\nexport const s = PostgresStore;\n"],
    ['src/ledger/x.ts', "import { openStore } from '../store/open.ts';\nexport const s = openStore;\n"],
    ['src/control/x.ts', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n"],
    ['src/records/x.ts', "import { createServer } from 'node:http';\nexport const c = createServer;\n"],
    ['src/store/tx/x.ts', "import { SqliteStore } from '../sqlite/store.ts';\nexport const s = SqliteStore;\n"],
    ['src/store/tx/x.ts', "import { composeStore } from '../compose.ts';\nexport const c = composeStore;\n"],
    ['src/store/port.ts', "import { openStore } from './open.ts';\nexport const o = openStore;\n"],
  ];
  it.each(violations)('%s may not import: %s', async (file, source) => {
    const messages = await restricted(file, source);
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages) expect(m).toContain('pure core');
  });

  it('allows the store port and the transaction primitives', async () => {
    const ok = "import type { RecordStore } from '../store/port.ts';\nimport { tx } from '../store/tx/ops.ts';\nexport type R = RecordStore;\nexport const t = tx;\n";
    expect(await restricted('src/ledger/x.ts', ok)).toEqual([]);
  });

  it('leaves the edges free to import the core', async () => {
    expect(await restricted('src/gateway/x.ts', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n")).toEqual([]);
  });
});
