import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * Media (issue 14): stored objects and who owns them, audio uploads and their transcodes,
 * display icons and family images. The bytes live in the media store (src/media-store), named
 * by their SHA-256; these tables say who may use which object and what it is.
 */
export function media(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      // One row per stored object: the bytes are in the media store under `sha256`.
      await db.schema
        .createTable('media_objects')
        .addColumn('sha256', text, (c) => c.primaryKey())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('content_type', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .execute();

      // Who holds which object, and as what. A user's quota is the sum of the sizes of the
      // objects they hold; holding the same object twice (as the same kind) counts once.
      await db.schema
        .createTable('media_holdings')
        .addColumn('owner_id', text, (c) => c.notNull())
        .addColumn('sha256', text, (c) => c.notNull().references('media_objects.sha256'))
        .addColumn('kind', text, (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addPrimaryKeyConstraint('media_holdings_pk', ['owner_id', 'sha256', 'kind'])
        .execute();
      await db.schema.createIndex('media_holdings_object').on('media_holdings').columns(['sha256', 'kind']).execute();

      // An audio upload: the upload id handed out, then the source that arrived for it.
      await db.schema
        .createTable('audio_uploads')
        .addColumn('upload_id', text, (c) => c.primaryKey())
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('filename', text)
        .addColumn('declared_sha256', text)
        /** `awaiting` (URL handed out), `receiving` (a PUT is running), `received`. */
        .addColumn('state', text, (c) => c.notNull())
        .addColumn('source_sha256', text)
        .addColumn('url_expires_at', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .execute();

      // One transcode of a source: the job, persisted so that it survives restarts. A worker
      // claims a queued job (or a running one whose lease lapsed) and renews its lease while
      // ffmpeg runs.
      await db.schema
        .createTable('transcodes')
        .addColumn('source_sha256', text, (c) => c.notNull())
        .addColumn('loudnorm', 'integer', (c) => c.notNull())
        /** `queued`, `running`, `done`, `failed`. */
        .addColumn('status', text, (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('lease_until', text)
        .addColumn('progress', 'integer', (c) => c.notNull())
        .addColumn('transcoded_sha256', text)
        /** JSON: duration, fileSize, channels, format, metadata (the source's tags). */
        .addColumn('transcoded_info', text)
        .addColumn('error', text)
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .addPrimaryKeyConstraint('transcodes_pk', ['source_sha256', 'loudnorm'])
        .execute();
      await db.schema.createIndex('transcodes_queue').on('transcodes').columns(['status', 'created_at']).execute();
      await db.schema.createIndex('transcodes_output').on('transcodes').columns(['transcoded_sha256']).execute();

      await db.schema
        .createTable('display_icons')
        .addColumn('display_icon_id', text, (c) => c.primaryKey())
        /** The uploading user, or `yoto` for the public icons loaded by operators. */
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('media_id', text, (c) => c.notNull().references('media_objects.sha256'))
        .addColumn('title', text)
        .addColumn('public_tags', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addUniqueConstraint('display_icons_user_media', ['user_id', 'media_id'])
        .execute();

      await db.schema
        .createTable('family_images')
        .addColumn('family_id', text, (c) => c.notNull())
        .addColumn('image_id', text, (c) => c.notNull().references('media_objects.sha256'))
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addPrimaryKeyConstraint('family_images_pk', ['family_id', 'image_id'])
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      for (const table of ['family_images', 'display_icons', 'transcodes', 'audio_uploads', 'media_holdings', 'media_objects']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
