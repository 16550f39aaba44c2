import tseslint from 'typescript-eslint';

// The pure core must stay free of I/O frameworks so its rules can be tested
// exhaustively; only adapters, the HTTP edge and the CLI may import these.
const IO_MODULES = ['express', 'undici', 'better-sqlite3', 'pg', 'pino', 'commander'];

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'well-known/', 'coverage/', 'dist/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/records/**', 'src/contracts/**', 'src/gates/**', 'src/control/**', 'src/ledger/**', 'src/attempts/**', 'src/audit/**', 'src/errors.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: IO_MODULES.map((name) => ({ name, message: 'pure core: inject an interface instead' })) }],
    },
  },
);
