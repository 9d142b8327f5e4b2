import type { Kysely, Migration } from 'kysely';

/**
 * One row that the readiness check writes: a database that answers reads but refuses writes
 * (out of space, read-only, its file gone) is not ready to serve.
 */
export function readinessProbe(): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('readiness_probe')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('readiness_probe').execute();
    },
  };
}
