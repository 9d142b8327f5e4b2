// ESLint with typescript-eslint's type-checked recommended rules (`npm run lint`, run by CI).
import js from '@eslint/js';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/results/', 'coverage/', 'web/src/api-types.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Fastify takes async functions for plugins, hooks and handlers (an async plugin without
      // an await is how it is told not to expect a callback): the rule would fight the framework.
      '@typescript-eslint/require-await': 'off',
      // `const { secret: _secret, ...rest } = x` drops a field on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // A migration is written against the schema of its time, not today's Database type: Kysely's
    // documented way is Kysely<any>.
    files: ['src/db/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The web app (web/): accessibility rules on its JSX, browser globals (its own tsconfig).
    files: ['web/**/*.tsx'],
    ...jsxA11y.flatConfigs.strict,
  },
  {
    // Plain JavaScript (bin/, scripts/, this file): no type information.
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', fetch: 'readonly', AbortSignal: 'readonly', URL: 'readonly' } },
  },
);
