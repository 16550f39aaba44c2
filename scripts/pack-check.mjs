// The packed package works on its own: `npm pack`, install the tarball into an
// empty directory (dependencies from the npm registry), then the installed bin
// must print the version and serve /healthz with an example config.
// Exits 0 and prints "pack-check: PASS" only when every step held.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const dir = mkdtempSync(join(tmpdir(), 'baton-pack-'));
const app = join(dir, 'app');
const sh = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 });
const fail = (msg) => {
  console.error(`pack-check: FAIL: ${msg}`);
  process.exitCode = 1;
};

try {
  const packed = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', dir], ROOT))[0];
  const files = packed.files.map((f) => f.path);
  for (const need of ['bin/baton.js', 'dist/cli/main.js', 'dist/console/static/htmx.min.js', 'dist/console/static/console.css', 'cards/gateway.yaml', 'scripts/ensure-native.mjs']) if (!files.includes(need)) throw new Error(`tarball lacks ${need}`);
  if (files.some((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('data/'))) throw new Error('tarball carries sources, tests or data');
  sh('mkdir', ['-p', app]);
  // The native addon's install script must run (npm 11 asks for approval).
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-check', private: true, allowScripts: { baton: true, 'better-sqlite3': true } }));
  sh('npm', ['install', '--no-audit', '--no-fund', join(dir, packed.filename)], app);
  const printed = sh('npx', ['--no-install', 'baton', '--version'], app).trim();
  if (printed !== version) throw new Error(`baton --version printed ${JSON.stringify(printed)}, expected ${version}`);
  // An operator (a clearly marked test key) so the operator listener and its console start too.
  const opsSha = createHash('sha256').update('pack-check-operator-key-not-a-secret').digest('hex');
  // The README's recipe as written: no cardsDir (the package's example card is served when ./cards is absent).
  writeFileSync(join(app, 'baton.config.yaml'), ['port: 0', 'dataDir: ./data', 'logLevel: info', 'admin:', '  port: 0', 'operators:', `  - id: ops`, `    apiKeySha256: ${opsSha}`, ''].join('\n'));
  await serveAndCheck();
  console.log(`pack-check: PASS (${packed.filename}, ${files.length} files, ${Math.round(packed.size / 1024)} KiB)`);
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * `node_modules/.bin/baton --config baton.config.yaml serve` — the bin run
 * directly, as the README says to under a supervisor (npx does not pass
 * SIGTERM on) — until it prints its URL, GET /healthz, then SIGTERM to that
 * one process: Baton must drain and stop, leaving nothing listening.
 */
async function serveAndCheck() {
  const child = spawn(join(app, 'node_modules', '.bin', 'baton'), ['--config', 'baton.config.yaml', 'serve'], { cwd: app, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const group = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  // 'close', not 'exit': the pipes close only when Baton itself (which shares them) has exited.
  const exited = new Promise((r) => child.once('close', (code) => r(code)));
  const timer = setTimeout(() => group('SIGKILL'), 60_000);
  try {
    const url = await new Promise((resolve, reject) => {
      child.stdout.on('data', () => {
        const m = /baton: listening on (\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      void exited.then(() => reject(new Error(`serve exited before listening:\n${out.slice(-2000)}`)));
    });
    const res = await fetch(`${url}/healthz`);
    const body = await res.json();
    if (res.status !== 200 || body.status !== 'ok') throw new Error(`/healthz answered ${res.status} ${JSON.stringify(body)}`);
    // The operator console's bundled assets ship in the package (no CDN).
    const admin = /baton: operator API and console on (\S+)/.exec(out)?.[1];
    if (!admin) throw new Error(`serve did not announce the operator listener:\n${out.slice(-2000)}`);
    for (const path of ['/console/login', '/console/assets/htmx.min.js', '/console/assets/sse.min.js', '/console/assets/console.css']) {
      const r = await fetch(`${admin}${path}`);
      if (r.status !== 200) throw new Error(`${path} answered ${r.status}`);
    }
    process.kill(child.pid, 'SIGTERM'); // the process itself, not its group: no wrapper in between
    await exited;
    if (!/stopped after draining/.test(out)) throw new Error(`serve did not drain after SIGTERM:\n${out.slice(-2000)}`);
    const after = await fetch(`${url}/healthz`).then(() => 'answered', () => 'refused');
    if (after !== 'refused') throw new Error('something still answers after SIGTERM');
  } finally {
    clearTimeout(timer);
    group('SIGKILL');
  }
}
