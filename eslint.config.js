// ESLint with typescript-eslint's type-checked recommended rules (`npm run lint`, run by CI).
import js from '@eslint/js';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import tseslint from 'typescript-eslint';
import functionOwnLines from './eslint-rules/function-own-lines.js';

/**
 * Where SQL may be written in src/ (issue 33, "Shape"): a module's `repository.ts` (its own SQL)
 * or `queries.ts` (what other modules build on), `*-repository.ts` / `*-queries.ts` where one
 * folder needs more than one, and the data layer itself:
 * - src/db/: the database (dialects, drivers, compiled statements, migrations);
 * - src/transfer/table-reader.ts and table-writer.ts: they read and write every table by its
 *   archive spec, with table and column names known only at run time (sql.table, sql.ref), for
 *   the export and import of a whole instance: database-layer work, not one module's queries.
 * bench/ is outside src/ and may count rows itself: it measures the server, it is not part of it.
 */
const SQL_HOMES = [
  'src/db/**',
  'src/**/repository.ts',
  'src/**/queries.ts',
  'src/**/*-repository.ts',
  'src/**/*-queries.ts',
  'src/transfer/table-reader.ts',
  'src/transfer/table-writer.ts',
];

const SQL_HOME_MESSAGE =
  'SQL goes in a repository.ts (this module\'s own) or queries.ts (for other modules) beside this file, or in src/db/: see SQL_HOMES in eslint.config.js.';

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
    // Kysely's query building and raw SQL only where SQL_HOMES says. The starting calls of every
    // query (what follows them needs one), running a compiled query, and the `sql` tag and
    // `CompiledQuery` (banned at the import, so that no alias slips by; types stay free to pass).
    files: ['src/**/*.ts'],
    ignores: SQL_HOMES,
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression > MemberExpression.callee[property.name=/^(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto|executeQuery)$/]",
          message: SQL_HOME_MESSAGE,
        },
        { selector: "TaggedTemplateExpression[tag.name='sql']", message: SQL_HOME_MESSAGE },
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: 'kysely', importNames: ['sql', 'CompiledQuery'], allowTypeImports: true, message: SQL_HOME_MESSAGE }] },
      ],
    },
  },
  {
    // No function in src/ past 100 lines of its own, the functions nested in it apart (issue 38):
    // a long one is split by what it does (eslint-rules/function-own-lines.js).
    files: ['src/**/*.ts'],
    plugins: { local: { rules: { 'function-own-lines': functionOwnLines } } },
    rules: { 'local/function-own-lines': ['error', { max: 100 }] },
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
