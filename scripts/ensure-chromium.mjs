// Makes sure Debian's `chromium` is installed for the console's browser tests
// (the machines are offline but for the npm registry and Debian's packages).
// Installs it with apt-get when it is absent and we may (root, apt-get present);
// otherwise says why, and the browser tests skip with the same message.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = process.env.BATON_CHROMIUM ?? '/usr/bin/chromium';
if (existsSync(CHROMIUM)) {
  console.log(`ensure-chromium: ${CHROMIUM} present`);
} else if (process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
  const run = (args) => execFileSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 900_000 });
  run(['update', '-qq']);
  run(['install', '-y', '-qq', '--no-install-recommends', 'chromium']);
  console.log(`ensure-chromium: installed ${CHROMIUM}`);
} else {
  console.log(`ensure-chromium: ${CHROMIUM} absent and cannot install it here (not root or no apt-get): the browser tests will skip`);
}
