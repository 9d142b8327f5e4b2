import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CardInput } from '../cards/schemas.js';
import { findCard } from '../cards/queries.js';
import { SHA256_HEX } from '../../media-store/media-store.js';
import { now } from '../../shared/clock.js';
import { AppError } from '../../shared/errors.js';
import { coverSlots, fingerprint, mediaSlots, portable, setAt, valueAt, type MediaSlot } from './card-media.js';
import type { CopyContext, LocalSide } from './copy-context.js';
import * as repo from './repository.js';
import type { JobCard } from './schemas.js';

/**
 * Bringing cards home (issue 34, "Pull"): each remote card read raw (its references) and with
 * `playable=true` (the URLs its media is at), its audio uploaded here as an app would (upload
 * URL by SHA-256, so audio already here is not fetched again; the PUT; the transcode, which
 * keeps audio already in the players' form as it is), its icons and cover through the image
 * services, then the card made, or updated where a pull made it before (link_cards).
 */

interface RemoteCard {
  cardId?: unknown;
  title?: unknown;
  deleted?: unknown;
  [key: string]: unknown;
}

const POLL_MS = 250;

/** A remote's card meets the rules a card sent here meets (its schema, the body limit) or is refused. */
const cardInput = TypeCompiler.Compile(CardInput);

function checkCard(doc: unknown, maxBytes: number): CardInput {
  if (!cardInput.Check(doc)) {
    const first = cardInput.Errors(doc).First();
    throw new AppError('bad-request', `the remote's card breaks this server's rules: ${first ? `${first.path || 'card'} ${first.message}` : 'not a card'}`);
  }
  const size = Buffer.byteLength(JSON.stringify(doc));
  if (size > maxBytes) throw new AppError('bad-request', `the remote's card is ${size} bytes of JSON; cards here are at most ${maxBytes}`);
  return doc;
}

/** Every MYO card id of the remote account, and those it lists deleted. */
export async function remoteCardIds(ctx: CopyContext): Promise<{ live: string[]; deleted: string[] }> {
  const { cards } = await ctx.remote.get<{ cards?: RemoteCard[] }>('/content/mine?showdeleted=true');
  if (!Array.isArray(cards)) throw new AppError('remote-failed', 'the remote answered /content/mine without a list of cards');
  const live: string[] = [];
  const deleted: string[] = [];
  for (const card of cards) {
    if (typeof card?.cardId !== 'string') continue;
    (card.deleted === true ? deleted : live).push(card.cardId);
  }
  return { live, deleted };
}

/** The cards pulled before that the remote no longer lists (deleted there: never deleted here). */
export async function goneAtRemote(ctx: CopyContext, local: LocalSide, listed: ReadonlySet<string>): Promise<JobCard[]> {
  const maps = await repo.listCardMaps(local.store.db, ctx.linkId);
  return maps
    .filter((m) => !listed.has(m.remote_card_id))
    .map((m) => ({ remoteCardId: m.remote_card_id, cardId: m.local_card_id, state: 'deleted-remote' as const }));
}

async function collect(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function pullCard(ctx: CopyContext, local: LocalSide, remoteCardId: string): Promise<JobCard> {
  const path = `/content/${encodeURIComponent(remoteCardId)}`;
  let raw: RemoteCard;
  try {
    raw = (await ctx.remote.get<{ card?: RemoteCard }>(path)).card ?? {};
  } catch (err) {
    if ((err as { status?: number }).status === 404) return { remoteCardId, cardId: null, state: 'deleted-remote' };
    throw err;
  }
  if (typeof raw !== 'object' || raw === null || typeof raw.title !== 'string') {
    throw new AppError('remote-failed', `the remote's card ${remoteCardId} has no title`);
  }
  const title = raw.title;
  const print = fingerprint(raw);
  const { db } = local.store;
  const map = await repo.findCardByRemote(db, ctx.linkId, remoteCardId);
  const mine = map ? await findCard(db, map.local_card_id) : undefined;
  const ours = mine && mine.deleted === 0 && mine.user_id === ctx.userId ? mine : undefined;
  if (map && ours && map.remote_fingerprint === print) return { remoteCardId, cardId: ours.card_id, title, state: 'unchanged' };
  if (map && ours && Number(ours.version) !== map.local_version && !ctx.overwrite) {
    return { remoteCardId, cardId: ours.card_id, title, state: 'conflict', error: 'changed on both sides since the last copy: pull with overwrite to take the remote card' };
  }

  const playable = (await ctx.remote.get<{ card?: RemoteCard }>(`${path}?playable=true`)).card ?? {};
  const doc = portable(raw);
  const slots = mediaSlots(doc);
  // The playable read's cover URL where it differs (a signed one), else the card's own.
  const covers = coverSlots(doc).map((c) => {
    const signed = valueAt(playable, c.path);
    return { path: c.path, url: typeof signed === 'string' && /^https?:\/\//i.test(signed) ? signed : c.url };
  });
  const coverUrls = [...new Set(covers.map((c) => c.url))];
  ctx.addFiles(new Set(slots.map((s) => `${s.kind}:${s.hash}`)).size + coverUrls.length);
  const icons = lazyRemoteIcons(ctx);
  // One copy of each media file, however many slots name it.
  const copies = new Map<string, Promise<string>>();
  const copyOf = (slot: MediaSlot): Promise<string> => {
    let copy = copies.get(`${slot.kind}:${slot.hash}`);
    if (!copy) {
      copy = ctx.file(async () => {
        const given = valueAt(playable, slot.path);
        const url = typeof given === 'string' && /^https?:\/\//i.test(given) ? given : slot.kind === 'icon' ? await icons(slot.hash) : undefined;
        if (!url) throw new AppError('remote-failed', `the remote gave no URL for the ${slot.kind} ${slot.hash}`);
        return slot.kind === 'audio' ? importAudio(ctx, local, slot.hash, url) : importIcon(ctx, local, url);
      });
      copies.set(`${slot.kind}:${slot.hash}`, copy);
    }
    return copy;
  };
  const [localRefs, localCovers] = await Promise.all([
    Promise.all(slots.map(copyOf)),
    Promise.all(coverUrls.map((url) => ctx.file(() => importCover(ctx, local, url)))),
  ]);
  slots.forEach((slot, i) => setAt(doc, slot.path, `yoto:#${localRefs[i]}`));
  for (const cover of covers) setAt(doc, cover.path, localCovers[coverUrls.indexOf(cover.url)]!);

  const input = checkCard({ ...doc, ...(ours ? { cardId: ours.card_id } : {}) }, local.maxCardBytes);
  const saved = await local.cards.save(ctx.userId, input, undefined, async (trx, result) => {
    const cardId = (JSON.parse(String(result.card)) as { card: { cardId: string } }).card.cardId;
    const row = await findCard(trx, cardId);
    await repo.saveCardMap(trx, {
      link_id: ctx.linkId,
      remote_card_id: remoteCardId,
      local_card_id: cardId,
      remote_fingerprint: print,
      local_version: Number(row?.version ?? 1),
      updated_at: now(),
    });
  });
  const cardId = (JSON.parse(String(saved.card)) as { card: { cardId: string } }).card.cardId;
  return { remoteCardId, cardId, title, state: 'copied' };
}

/** The remote's icon URLs by media id (its own and its public ones), read once a card at most. */
function lazyRemoteIcons(ctx: CopyContext): (mediaId: string) => Promise<string | undefined> {
  let table: Promise<Map<string, string>> | undefined;
  const list = async (path: string): Promise<{ mediaId?: unknown; url?: unknown }[]> => {
    const { displayIcons } = await ctx.remote.get<{ displayIcons?: { mediaId?: unknown; url?: unknown }[] }>(path).catch(() => ({ displayIcons: [] }));
    return Array.isArray(displayIcons) ? displayIcons : [];
  };
  return async (mediaId) => {
    table ??= Promise.all([list('/media/displayIcons/user/me'), list('/media/displayIcons/user/yoto')]).then(
      (lists) => new Map(lists.flat().flatMap((i) => (typeof i.mediaId === 'string' && typeof i.url === 'string' ? [[i.mediaId, i.url] as const] : []))),
    );
    return (await table).get(mediaId);
  };
}

/** Audio through this instance's own upload flow; answers the transcode's hash. */
async function importAudio(ctx: CopyContext, local: LocalSide, hash: string, url: string): Promise<string> {
  const { uploadId, uploadUrl } = await local.uploads.create(ctx.userId, { sha256: SHA256_HEX.test(hash) ? hash : undefined });
  let bytes = 0;
  if (uploadUrl) {
    const signed = new URL(uploadUrl).searchParams;
    const { body } = await ctx.remote.download(url, local.maxAudioBytes);
    const received = await local.uploads.receive(uploadId, { expires: signed.get('expires') ?? undefined, signature: signed.get('signature') ?? undefined }, body);
    bytes = received.size;
  }
  const deadline = Date.now() + local.transcodeWaitMs;
  for (;;) {
    const status = await local.uploads.status(ctx.userId, uploadId, false);
    if ('transcodedSha256' in status) {
      ctx.fileDone(bytes);
      return status.transcodedSha256;
    }
    if (Date.now() > deadline) throw new AppError('remote-failed', `the audio ${hash} was not transcoded in time`);
    await sleep(POLL_MS);
  }
}

async function importIcon(ctx: CopyContext, local: LocalSide, url: string): Promise<string> {
  const bytes = await collect((await ctx.remote.download(url, local.maxImageBytes)).body);
  let icon;
  try {
    // A 16x16 PNG or GIF is kept as it is (the same bytes: the same id on both sides).
    icon = await local.images.uploadIcon(ctx.userId, bytes, { autoConvert: false });
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'bad-request') throw err;
    icon = await local.images.uploadIcon(ctx.userId, bytes, { autoConvert: true });
  }
  ctx.fileDone(bytes.length);
  return icon.mediaId;
}

async function importCover(ctx: CopyContext, local: LocalSide, url: string): Promise<string> {
  const bytes = await collect((await ctx.remote.download(url, local.maxImageBytes)).body);
  const cover = await local.images.uploadCover(ctx.userId, bytes, { autoconvert: false });
  ctx.fileDone(bytes.length);
  return cover.mediaUrl;
}
