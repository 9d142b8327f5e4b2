import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * The family's players (issue 22). A device stays a row of `family_devices` (an operator may
 * still list one by id alone); these columns give it what a player has, all nullable so that
 * such a device keeps working with the documented defaults:
 * - `name`, `device_type`: what `GET /device-v2/devices/mine` shows (null: the id, `cardshelf-device`);
 * - `config`, `shortcuts`: the settings documents, JSON, stored whole (null: the defaults);
 * - `status`, `status_at`: the last status the player reported, JSON, and when (null: never);
 * - `credential_id`: the id (`jti`) of the one token a registered player holds. A request with a
 *   player token is accepted only while its row holds that id, so removing the device (the row
 *   goes) or registering it again revokes the old token at once, on every instance.
 */
export function players(dialect: StoreDialect): Migration {
  const columns = ['name', 'device_type', 'config', 'shortcuts', 'status', 'status_at', 'credential_id', 'registered_by'] as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      // One column a statement: SQLite's ALTER TABLE adds one at a time.
      for (const column of columns) {
        await db.schema.alterTable('family_devices').addColumn(column, dialect.text).execute();
      }
    },
    async down(db: Kysely<any>): Promise<void> {
      for (const column of [...columns].reverse()) {
        await db.schema.alterTable('family_devices').dropColumn(column).execute();
      }
    },
  };
}
