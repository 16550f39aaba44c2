/**
 * The console's static assets, bundled with the package (the machines are
 * offline: no CDN). `npm run build` copies them next to the compiled console
 * (dist/console/static, scripts/build-console.mjs); running from sources,
 * they are read from src/console/static and the pinned npm packages.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** name → the npm module file it comes from (absent: a file of our own in static/). */
export const ASSETS: Record<string, { type: string; module?: string }> = {
  'htmx.min.js': { type: 'text/javascript; charset=utf-8', module: 'htmx.org/dist/htmx.min.js' },
  'sse.min.js': { type: 'text/javascript; charset=utf-8', module: 'htmx-ext-sse/dist/sse.min.js' },
  'console.css': { type: 'text/css; charset=utf-8' },
};

const here = dirname(fileURLToPath(import.meta.url));

function locate(name: string, module: string | undefined): string {
  const built = join(here, 'static', name);
  if (existsSync(built)) return built;
  if (module) {
    try {
      return createRequire(import.meta.url).resolve(module);
    } catch {
      // fall through to the boot-time error below
    }
  }
  throw new TypeError(`console asset ${name} is missing: run \`npm run build\` (npm install does it)`);
}

/** Loads every asset once, at start: a missing one fails the start, not a page later. */
export function loadAssets(): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const [name, a] of Object.entries(ASSETS)) {
    const body = readFileSync(locate(name, a.module));
    out.set(name, { body, type: a.type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return out;
}
