#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`, which `npm install` runs as `prepare`).
// Tests and the demo run the TypeScript sources through tsx instead.
try {
  await import('../dist/cli/main.js');
} catch (err) {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
    console.error('baton: dist/ is missing; run `npm run build` (npm install does it) first');
    process.exit(2);
  }
  throw err;
}
