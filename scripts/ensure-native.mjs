// npm 11 may skip dependency install scripts that are not approved in
// "allowScripts"; better-sqlite3 is useless without its native addon, so make
// sure it loads and rebuild it from source when it does not.
import { createRequire } from 'node:module';
import { execSync } from 'node:child_process';

const require = createRequire(import.meta.url);

function loads() {
  try {
    const Database = require('better-sqlite3');
    new Database(':memory:').close();
    return true;
  } catch {
    return false;
  }
}

if (!loads()) {
  console.log('baton: better-sqlite3 native addon missing, building it');
  execSync('npm rebuild better-sqlite3 --foreground-scripts', { stdio: 'inherit' });
  if (!loads()) {
    console.error('baton: better-sqlite3 still does not load after rebuild');
    process.exit(1);
  }
}
