import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The ESLint rule that keeps SQL in repository and queries files (issue 33, "Shape";
 * eslint.config.js, SQL_HOMES), run as `npm run lint` runs it, on code put at real paths of src/.
 */
const RULES = new Set(['no-restricted-syntax', '@typescript-eslint/no-restricted-imports']);

/** Each way of writing SQL, on lines of its own. */
const QUERIES: [name: string, lines: string[]][] = [
  ['select', ["export const select = (db: any) => db.selectFrom('cards').selectAll().execute();"]],
  ['select without from', ["export const noFrom = (db: any) => db.selectNoFrom((eb: any) => eb.val(1).as('one')).execute();"]],
  ['insert', ["export const insert = (db: any) => db.insertInto('cards').values({}).execute();"]],
  ['update', ["export const update = (trx: any) => trx.updateTable('cards').set({ deleted: 1 }).execute();"]],
  ['delete', ["export const remove = (trx: any) => trx.deleteFrom('cards').execute();"]],
  ['a compiled query run', ['export const run = (db: any, query: any) => db.executeQuery(query);']],
  ['the sql tag', ["import { sql } from 'kysely';", 'export const tagged = (db: any) => sql`select 1`.execute(db);']],
  ['the sql tag, renamed', ["import { sql as q } from 'kysely';", 'export const renamed = q`select 1`;']],
  ['a raw compiled query', ["import { CompiledQuery } from 'kysely';", "export const raw = CompiledQuery.raw('select 1', []);"]],
];
/** Kysely's types, which carry no SQL. */
const TYPES_ONLY = ["import type { CompiledQuery as Compiled, Kysely } from 'kysely';", 'export type Run = (db: Kysely<object>, query: Compiled) => void;'];

/** The lines (1-based, first and last) of each case in the text linted. */
const ranges = new Map<string, [number, number]>();
const lines: string[] = [];
for (const [name, code] of [...QUERIES, ['types only', TYPES_ONLY] as [string, string[]]]) {
  ranges.set(name, [lines.length + 1, lines.length + code.length]);
  lines.push(...code);
}

const REFUSED_IN = [
  'src/modules/library/service.ts',
  'src/modules/media/gc.ts',
  'src/transfer/exporter.ts',
  'src/seed/scale.ts',
  'src/accounts/service.ts',
  // The sign-in services and the engine's glue, whose SQL moved to repositories (issue 33, "Shape").
  'src/accounts/passkeys.ts',
  'src/accounts/setup-link.ts',
  'src/accounts/throttle.ts',
  'src/accounts/invitations.ts',
  'src/oauth/adapter.ts',
  'src/oauth/shims.ts',
  'src/oauth/grants.ts',
  'src/oauth/clients.ts',
];
const ALLOWED_IN = [
  'src/modules/library/repository.ts',
  'src/modules/library/queries.ts',
  'src/transfer/repository.ts',
  'src/accounts/throttle-repository.ts',
  'src/oauth/oauth-records-repository.ts',
  'src/db/prepared.ts',
  'src/db/migrations/001-initial.ts',
  'src/transfer/table-reader.ts',
  'src/transfer/table-writer.ts',
];

/** The rule's messages by path, as [line, message]. */
const found = new Map<string, [number, string][]>();

beforeAll(async () => {
  const eslint = new ESLint({
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    ruleFilter: ({ ruleId }) => RULES.has(ruleId),
    // Both rules read syntax only: without type information each lint takes milliseconds, not seconds.
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });
  for (const path of [...REFUSED_IN, ...ALLOWED_IN]) {
    const [result] = await eslint.lintText(lines.join('\n'), { filePath: path });
    const messages = (result?.messages ?? []).filter((m) => m.ruleId !== null && RULES.has(m.ruleId));
    found.set(path, messages.map((m) => [m.line, m.message]));
  }
}, 180_000);

const messagesOf = (path: string, name: string): string[] => {
  const [first, last] = ranges.get(name)!;
  return found.get(path)!.filter(([line]) => line >= first && line <= last).map(([, message]) => message);
};

describe('SQL only in repository and queries files (eslint.config.js, SQL_HOMES)', () => {
  describe.each(REFUSED_IN)('refused in %s', (path) => {
    it.each(QUERIES.map(([name]) => name))('%s', (name) => {
      const messages = messagesOf(path, name);
      expect(messages.length).toBeGreaterThan(0);
      for (const message of messages) expect(message).toContain('SQL goes in a repository.ts');
    });

    it("leaves Kysely's types free to pass", () => {
      expect(messagesOf(path, 'types only')).toEqual([]);
    });
  });

  describe.each(ALLOWED_IN)('allowed in %s', (path) => {
    it('writes every kind of query', () => {
      expect(found.get(path)).toEqual([]);
    });
  });
});
