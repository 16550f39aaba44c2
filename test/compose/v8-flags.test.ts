/**
 * The V8 flags a gateway sets for its own process (src/compose/v8-flags.ts,
 * issue #24): allocation-site pretenuring off, unless node was started with
 * that flag either way; set by startGateway itself, so `baton serve`, its
 * workers and `npm start` all run with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyV8Flags, GATEWAY_V8_FLAGS, v8FlagsFor } from '../../src/compose/v8-flags.ts';
import { Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway } from '../../src/main.ts';

// Replaced on node:v8 itself, then synced into every ESM import of it: the calls are recorded, and still made.
const v8 = createRequire(import.meta.url)('node:v8') as { setFlagsFromString: (flags: string) => void };
const real = v8.setFlagsFromString;
let set: string[] = [];
beforeEach(() => {
  set = [];
  v8.setFlagsFromString = (flags: string) => (set.push(flags), real(flags));
  syncBuiltinESMExports();
});
afterEach(() => {
  v8.setFlagsFromString = real;
  syncBuiltinESMExports();
});

describe('V8 flags of a gateway process', () => {
  it('turns allocation-site pretenuring off by default', () => {
    expect(GATEWAY_V8_FLAGS).toStrictEqual(['--no-allocation-site-pretenuring']);
    expect(v8FlagsFor([])).toStrictEqual(['--no-allocation-site-pretenuring']);
    expect(v8FlagsFor(['--max-old-space-size=512', '--import', 'tsx'])).toStrictEqual(['--no-allocation-site-pretenuring']);
  });

  it("leaves the flag alone when node was started with it, either way and in either spelling", () => {
    for (const given of ['--allocation-site-pretenuring', '--no-allocation-site-pretenuring', '--allocation_site_pretenuring', '--noallocation-site-pretenuring', '--allocation-site-pretenuring=false']) {
      expect(v8FlagsFor([given]), given).toStrictEqual([]);
    }
  });

  it('sets what it decided, through node:v8', () => {
    expect(applyV8Flags(['--allocation-site-pretenuring'])).toStrictEqual([]);
    expect(set).toStrictEqual([]);
    expect(applyV8Flags([])).toStrictEqual(['--no-allocation-site-pretenuring']);
    expect(set).toStrictEqual(['--no-allocation-site-pretenuring']);
  });

  it('startGateway sets them before it serves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-v8-flags-'));
    const gw = await startGateway(Config.parse({ port: 0, dataDir: dir }), { logger: createLogger({ level: 'silent' }) });
    try {
      expect(set).toContain('--no-allocation-site-pretenuring');
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
