import tseslint from 'typescript-eslint';

// The pure core must stay free of I/O frameworks so its rules can be tested
// exhaustively; only adapters, the HTTP edge and the CLI may import these.
const IO_MODULES = ['express', 'undici', 'better-sqlite3', 'pg', 'pino', 'commander'];

// The pure core (RW-003/ADR-0014 rules and the transaction programs): its
// folders may not reach the edges, the store adapters or file/network I/O.
const PURE_CORE = [
  'src/records/**',
  'src/contracts/**',
  // src/gates/approvals.ts is the gate's service (store, callers); the rest is its pure rules.
  'src/gates/{check,policy,preview,records,rules}.ts',
  'src/control/**',
  'src/ledger/**',
  'src/attempts/**',
  'src/audit/**',
  'src/store/tx/**',
  // The MCP adapter's decisions (src/mcp/call.ts and front.ts are its edge).
  'src/mcp/{read-route,outcome,policy}.ts',
  'src/store/port.ts',
  'src/errors.ts',
];
const NODE_IO = ['fs', 'fs/promises', 'http', 'https', 'net', 'node:fs', 'node:fs/promises', 'node:http', 'node:https', 'node:net', 'node:http2'];

// Issue #24: on Node 20 one AsyncLocalStorage in use puts a hook on every promise the process creates
// (~1.5 % of the gateway's CPU); per-request facts travel as parameters (src/gateway/caller-scope.ts).
const NO_ALS = ['node:async_hooks', 'async_hooks'].map((name) => ({
  name,
  importNames: ['AsyncLocalStorage'],
  message: 'no AsyncLocalStorage: pass per-request facts as parameters (src/gateway/caller-scope.ts says why)',
}));

// Issue #24: on Node 20 (V8 11.3) an object literal that begins with a spread and goes on with more members
// gives each object it makes a map of its own: every member after the spread's copy is added through V8's
// runtime (about 0.6 µs each), and every site that reads such objects turns megamorphic. Begin it with `...{}`
// (the same object, each made on one shared map), or with a member, or build it with Object.assign.
const LEADING_SPREAD = {
  selector: 'ObjectExpression[properties.length>1] > SpreadElement:first-child:not([argument.type="ObjectExpression"][argument.properties.length=0])',
  message: 'an object literal that begins with a spread takes a map of its own per object on Node 20: begin it with `...{}` (eslint.config.js says why)',
};

function pureCoreRule(extra) {
  return [
    'error',
    {
      paths: [
        ...NO_ALS,
        ...IO_MODULES.map((name) => ({ name, message: 'pure core: inject an interface instead' })),
        ...NODE_IO.map((name) => ({ name, message: 'pure core: no file or network I/O; inject an interface instead' })),
      ],
      patterns: [
        { regex: '(^|/)(gateway|push|operator|http|cli)/', message: 'pure core: the edges depend on the core, never the reverse' },
        // The transaction port (store/port.ts, store/tx/) is the core's; the adapters are not.
        { regex: '(^|/)store/(?!port\\.ts$|tx/)', message: 'pure core: use the store port (store/port.ts, store/tx/), not an adapter' },
        { regex: '(^|/)(sqlite|postgres)/', message: 'pure core: use the store port, not an adapter' },
        { regex: '(^|/)main\\.ts$', message: 'pure core: main.ts composes the core, never the reverse' },
        ...extra,
      ],
    },
  ];
}

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'well-known/', 'coverage/', 'dist/', 'reports/', '.stryker-tmp/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  { files: ['src/**'], rules: { 'no-restricted-imports': ['error', { paths: NO_ALS }], 'no-restricted-syntax': ['error', LEADING_SPREAD] } },
  { files: PURE_CORE, rules: { 'no-restricted-imports': pureCoreRule([]) } },
  // Inside store/, relative imports name adapters without the `store/` prefix.
  {
    files: ['src/store/tx/**'],
    rules: { 'no-restricted-imports': pureCoreRule([{ regex: '^\\.\\./(?!\\.\\./|port\\.ts$)', message: 'pure core: store/tx may use only the store port' }]) },
  },
  { files: ['src/store/port.ts'], rules: { 'no-restricted-imports': pureCoreRule([{ regex: '^\\./(?!tx/|meta\\.ts$|gauges-sql\\.ts$|content-sql\\.ts$)', message: 'pure core: the store port may not import an adapter' }]) } },
  // What the CLI loads before any command runs (`baton --help`, every command's declaration): never the gateway, the
  // store, the keys or the card verifier. A command imports them when it runs (a dynamic import, or its *-run.ts), so
  // `config check` or `ledger show` does not load the whole gateway first (about 1 s of every CLI start under tsx).
  {
    files: ['src/cli/program.ts', 'src/cli/context.ts', 'src/cli/with-*.ts', 'src/cli/commands/*.ts'],
    ignores: ['src/cli/commands/*-run.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)(main|store/open|keys/keyring|operator/service|operator/control-actions|http/sdk-console|cards/(verify|resolver|publisher|fetch)|config/(key|network)-checks)\\.ts$',
              allowTypeImports: true,
              message: 'loaded when the CLI starts: import it where the command runs (await import, or the command\'s *-run.ts)',
            },
          ],
        },
      ],
    },
  },
);
