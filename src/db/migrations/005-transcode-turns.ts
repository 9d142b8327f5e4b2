import type { Kysely, Migration } from 'kysely';

/**
 * Users take turns in the transcode queue (issue 17): the claim looks up who uploaded each
 * queued source, and what each of those users had transcoded last, by these indexes.
 */
export function transcodeTurns(): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.createIndex('audio_uploads_source').on('audio_uploads').columns(['source_sha256', 'state']).execute();
      await db.schema.createIndex('audio_uploads_user_source').on('audio_uploads').columns(['user_id', 'source_sha256']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropIndex('audio_uploads_user_source').execute();
      await db.schema.dropIndex('audio_uploads_source').execute();
    },
  };
}
