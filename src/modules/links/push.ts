import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileTypeFromBuffer } from 'file-type';
import { findCard } from '../cards/queries.js';
import { SHA256_HEX } from '../../media-store/media-store.js';
import { now } from '../../shared/clock.js';
import { AppError } from '../../shared/errors.js';
import { coverSlots, fingerprint, mediaSlots, portable, setAt, type MediaSlot } from './card-media.js';
import type { CopyContext, LocalSide } from './copy-context.js';
import * as repo from './repository.js';
import type { JobCard } from './schemas.js';

/**
 * Sending cards out (issue 34, "Push"): each local card's audio through the remote's own upload
 * flow (upload URL by SHA-256: audio the remote's account holds is not sent again; the PUT; the
 * transcode poll), its icons and cover through the remote's upload routes, then the card made
 * there, or updated where a push made it before. The card's creation carries an Idempotency-Key
 * of the job and the card, so a job resumed after a crash does not make it twice.
 */

const POLL_MS = 500;

interface RemoteCardAnswer {
  card?: { cardId?: unknown; [key: string]: unknown };
}

export async function pushCard(ctx: CopyContext & { jobId: string }, local: LocalSide, cardId: string): Promise<JobCard> {
  const { db } = local.store;
  const card = await findCard(db, cardId);
  if (!card || card.origin !== 'myo' || card.user_id !== ctx.userId || card.deleted === 1) {
    return { remoteCardId: null, cardId, state: 'failed', error: 'not one of your cards (or deleted)' };
  }
  const stored = JSON.parse(card.doc) as Record<string, unknown>;
  const title = typeof stored.title === 'string' ? stored.title : undefined;
  const map = await repo.findCardByLocal(db, ctx.linkId, cardId);
  if (map && Number(card.version) === map.local_version) return { remoteCardId: map.remote_card_id, cardId, title, state: 'unchanged' };
  let remoteCardId = map?.remote_card_id;
  if (map) {
    const there = await readRemote(ctx, map.remote_card_id);
    if (!there) remoteCardId = undefined; // deleted there: sent anew
    else if (fingerprint(there) !== map.remote_fingerprint && !ctx.overwrite) {
      return { remoteCardId: map.remote_card_id, cardId, title, state: 'conflict', error: 'changed on both sides since the last copy: push with overwrite to replace the remote card' };
    }
  }

  const doc = portable(stored);
  const slots = mediaSlots(doc);
  // Covers stored here are sent; a cover URL elsewhere stays as it is.
  const covers = coverSlots(doc).flatMap((c) => {
    const hash = ownCoverHash(local, c.url);
    return hash ? [{ path: c.path, hash }] : [];
  });
  const coverHashes = [...new Set(covers.map((c) => c.hash))];
  ctx.addFiles(new Set(slots.map((s) => `${s.kind}:${s.hash}`)).size + coverHashes.length);
  const copies = new Map<string, Promise<string>>();
  const copyOf = (slot: MediaSlot): Promise<string> => {
    const key = `${slot.kind}:${slot.hash}`;
    let copy = copies.get(key);
    if (!copy) {
      copy = ctx.file(() => (slot.kind === 'audio' ? sendAudio(ctx, local, slot.hash) : sendIcon(ctx, local, slot.hash)));
      copies.set(key, copy);
    }
    return copy;
  };
  const [remoteRefs, remoteCovers] = await Promise.all([
    Promise.all(slots.map(copyOf)),
    Promise.all(coverHashes.map((hash) => ctx.file(() => sendCover(ctx, local, hash)))),
  ]);
  slots.forEach((slot, i) => setAt(doc, slot.path, `yoto:#${remoteRefs[i]}`));
  for (const cover of covers) setAt(doc, cover.path, remoteCovers[coverHashes.indexOf(cover.hash)]!);

  const answer = await ctx.remote.send<RemoteCardAnswer>('POST', '/content', { ...doc, ...(remoteCardId ? { cardId: remoteCardId } : {}) }, {
    'idempotency-key': `cardshelf-push-${ctx.jobId}-${cardId}${remoteCardId ? '-update' : ''}`,
  });
  const sent = answer.card?.cardId;
  if (typeof sent !== 'string') throw new AppError('remote-failed', 'the remote answered the card without its cardId');
  const there = await readRemote(ctx, sent);
  await repo.saveCardMap(db, {
    link_id: ctx.linkId,
    remote_card_id: sent,
    local_card_id: cardId,
    remote_fingerprint: fingerprint(there ?? answer.card),
    local_version: Number(card.version),
    updated_at: now(),
  });
  return { remoteCardId: sent, cardId, title, state: 'copied' };
}

async function readRemote(ctx: CopyContext, remoteCardId: string): Promise<Record<string, unknown> | undefined> {
  try {
    return (await ctx.remote.get<RemoteCardAnswer>(`/content/${encodeURIComponent(remoteCardId)}`)).card;
  } catch (err) {
    if ((err as { status?: number }).status === 404) return undefined;
    throw err;
  }
}

/** The hash of a cover stored here (`<PUBLIC_BASE_URL>/media/public/<hash>`); another URL is sent as it is. */
function ownCoverHash(local: LocalSide, url: string): string | undefined {
  const prefix = `${local.publicBaseUrl}/media/public/`;
  if (!url.startsWith(prefix)) return undefined;
  const hash = url.slice(prefix.length);
  return SHA256_HEX.test(hash) ? hash : undefined;
}

async function storedBytes(local: LocalSide, hash: string, what: string): Promise<Buffer> {
  const stat = await local.mediaStore.stat(hash);
  if (!stat) throw new AppError('not-found', `the ${what} ${hash} is not stored here`);
  const chunks: Buffer[] = [];
  for await (const chunk of local.mediaStore.read(hash)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function sendAudio(ctx: CopyContext, local: LocalSide, hash: string): Promise<string> {
  const stat = await local.mediaStore.stat(hash);
  if (!stat) throw new AppError('not-found', `the audio ${hash} is not stored here`);
  const { upload } = await ctx.remote.get<{ upload?: { uploadId?: unknown; uploadUrl?: unknown } }>(
    `/media/transcode/audio/uploadUrl?sha256=${hash}&filename=${hash}.m4a`,
  );
  const uploadId = upload?.uploadId;
  if (typeof uploadId !== 'string') throw new AppError('remote-failed', 'the remote answered no upload id');
  let bytes = 0;
  if (typeof upload?.uploadUrl === 'string') {
    await ctx.remote.upload({ url: upload.uploadUrl }, 'PUT', { open: () => local.mediaStore.read(hash), size: stat.size, contentType: 'audio/mp4' });
    bytes = stat.size;
  }
  const deadline = Date.now() + local.transcodeWaitMs;
  for (;;) {
    const { transcode } = await ctx.remote.get<{ transcode?: { transcodedSha256?: unknown } }>(`/media/upload/${encodeURIComponent(uploadId)}/transcoded`);
    if (typeof transcode?.transcodedSha256 === 'string') {
      ctx.fileDone(bytes);
      return transcode.transcodedSha256;
    }
    if (Date.now() > deadline) throw new AppError('remote-failed', `the remote did not transcode the audio ${hash} in time`);
    await sleep(POLL_MS);
  }
}

async function sendIcon(ctx: CopyContext, local: LocalSide, hash: string): Promise<string> {
  const bytes = await storedBytes(local, hash, 'icon');
  const type = (await fileTypeFromBuffer(bytes))?.mime ?? 'image/png';
  const { displayIcon } = await ctx.remote.upload<{ displayIcon?: { mediaId?: unknown } }>(
    { path: '/media/displayIcons/user/me/upload?autoConvert=false' },
    'POST',
    { open: () => bufferStream(bytes), size: bytes.length, contentType: type },
  );
  if (typeof displayIcon?.mediaId !== 'string') throw new AppError('remote-failed', 'the remote answered the icon without its mediaId');
  ctx.fileDone(bytes.length);
  return displayIcon.mediaId;
}

async function sendCover(ctx: CopyContext, local: LocalSide, hash: string): Promise<string> {
  const bytes = await storedBytes(local, hash, 'cover');
  const type = (await fileTypeFromBuffer(bytes))?.mime ?? 'image/jpeg';
  const { coverImage } = await ctx.remote.upload<{ coverImage?: { mediaUrl?: unknown } }>(
    { path: '/media/coverImage/user/me/upload?autoconvert=false' },
    'POST',
    { open: () => bufferStream(bytes), size: bytes.length, contentType: type },
  );
  if (typeof coverImage?.mediaUrl !== 'string') throw new AppError('remote-failed', 'the remote answered the cover without its mediaUrl');
  ctx.fileDone(bytes.length);
  return coverImage.mediaUrl;
}

function bufferStream(bytes: Buffer): Readable {
  return Readable.from([bytes]);
}
