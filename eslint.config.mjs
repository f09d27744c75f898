// ESLint: typescript-eslint's recommended rules, plus the type-aware ones that catch what hurts
// a Node-RED runtime (a promise nobody awaits or catches, a promise where a callback is expected).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const node = {
  process: 'readonly',
  console: 'readonly',
  Buffer: 'readonly',
  URL: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
};
const commonjs = { ...node, require: 'readonly', module: 'writable', __dirname: 'readonly' };

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.matrix/', '.nodered-demo/', 'test-output/', 'reports/', '.stryker-tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Tests and the benchmark reach into Node-RED's untyped objects and load its modules by path.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Node-RED's node constructors keep `this` as `node` for the closures they register.
    files: ['nodes/**/*.ts'],
    rules: { '@typescript-eslint/no-this-alias': 'off' },
  },
  { files: ['scripts/**/*.mjs'], languageOptions: { globals: node } },
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: commonjs },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
