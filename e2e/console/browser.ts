/**
 * Headless Chromium for the console's browser tests: Debian's `chromium`
 * (installed by scripts/ensure-chromium.mjs, which the test setup runs)
 * driven by playwright-core. Where no Chromium is installed the browser
 * tests skip, saying so.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.BATON_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `browser tests skipped: no Chromium at ${CHROMIUM} (run \`node scripts/ensure-chromium.mjs\` as root, or set BATON_CHROMIUM)`;
}

export function launch(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}
