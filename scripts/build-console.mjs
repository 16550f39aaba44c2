// Copies the operator console's static assets into dist/console/static so the
// package ships them (no CDN: the machines are offline). Run by `npm run build`.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const out = join(ROOT, 'dist/console/static');
const require = createRequire(import.meta.url);
mkdirSync(out, { recursive: true });
for (const f of readdirSync(join(ROOT, 'src/console/static'))) copyFileSync(join(ROOT, 'src/console/static', f), join(out, f));
// The pinned front-end packages (devDependencies: only their built files ship).
copyFileSync(require.resolve('htmx.org/dist/htmx.min.js'), join(out, 'htmx.min.js'));
copyFileSync(require.resolve('htmx-ext-sse/dist/sse.min.js'), join(out, 'sse.min.js'));
// Silent: `npm pack --json` runs this (prepare) and its stdout must stay JSON.
