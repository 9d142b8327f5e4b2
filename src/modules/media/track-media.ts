import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/database.js';
import * as repo from './repository.js';
import type { TranscodedInfo } from './transcoder.js';

const AUDIO_REF = /^(?:service|yoto):#([0-9a-f]{64})$/;

/**
 * Fills in what a client left out of a track that plays transcoded audio stored here:
 * `duration` (seconds), `fileSize` (bytes), `channels` (`mono` or `stereo`, as cards write it)
 * and `format`. Values the client sent are kept. Tracks of media not (yet) stored are left alone.
 */
export function createTrackMediaFiller(): (
  db: Kysely<Database> | Transaction<Database>,
  doc: { content?: unknown },
) => Promise<void> {
  return async (db, doc) => {
    const chapters = (doc.content as { chapters?: unknown } | undefined)?.chapters;
    if (!Array.isArray(chapters)) return;
    const cache = new Map<string, TranscodedInfo | undefined>();
    for (const chapter of chapters) {
      const tracks = (chapter as { tracks?: unknown } | null)?.tracks;
      if (!Array.isArray(tracks)) continue;
      for (const track of tracks as Record<string, unknown>[]) {
        const hash = typeof track?.trackUrl === 'string' ? AUDIO_REF.exec(track.trackUrl)?.[1] : undefined;
        if (!hash) continue;
        if (!cache.has(hash)) {
          const job = await repo.findTranscodeByOutput(db, hash);
          cache.set(hash, job?.transcoded_info ? (JSON.parse(job.transcoded_info) as TranscodedInfo) : undefined);
        }
        const info = cache.get(hash);
        if (!info) continue;
        track.duration ??= Math.round(info.duration);
        track.fileSize ??= info.fileSize;
        track.channels ??= info.channels === 1 ? 'mono' : 'stereo';
        track.format ??= info.format;
      }
    }
  };
}
