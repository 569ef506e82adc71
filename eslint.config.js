/**
 * ESLint (`npm run lint`): typescript-eslint's type-checked recommended rules over the sources, tests,
 * benchmarks and scripts. Type information comes from tsconfig.json (the project service), so rules such
 * as no-floating-promises and no-misused-promises see what every call returns: a promise nobody awaits
 * in the controller is a reconcile whose failure nobody hears about.
 *
 * Every rule switched off or relaxed below says why, in one line above it.
 */
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** The Node.js globals the plain JavaScript files use (the TypeScript files get theirs from @types/node). */
const nodeGlobals = {
  process: 'readonly',
  console: 'readonly',
  URL: 'readonly',
  Buffer: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
};

export default defineConfig(
  {
    // Generated or copied verbatim: the CRD imports, synth output, built library, API reference, and
    // the migration fixtures (input files, compared byte for byte).
    ignores: [
      'lib/',
      'dist/',
      'imports/',
      'docs/api/',
      'node_modules/',
      'coverage/',
      'cdk.out/',
      '.tmp/',
      'test/migrate/fixtures/',
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // As tsc's noUnusedParameters: `_name` marks a kept parameter; `{ drop: _drop, ...rest }` omits a field.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Manifests, API bodies and parsed YAML are untyped JSON here; typing them all is a change of its own.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // `String(field ?? '')` on untyped manifest fields is deliberate: messages show whatever the user wrote.
      '@typescript-eslint/no-base-to-string': 'off',
      // A caught error may be passed on as it came, as only-throw-error allows for `throw`.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Stand-ins for API calls are `async` without `await` so they return and reject promises as the real ones.
      '@typescript-eslint/require-await': 'off',
      // Tests save methods such as process.stdout.write as values, to restore them afterwards.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Plain JavaScript (bin/, scripts/*.js, configuration files) is outside tsconfig.json: no type information.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: nodeGlobals },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
