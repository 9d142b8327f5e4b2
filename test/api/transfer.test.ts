import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.js';
import { openMediaStore } from '../../src/media-store/open-media-store.js';
import { ArchiveRefused, ImportConflicts, type ImportReport } from '../../src/transfer/importer.js';
import { createTransferService } from '../../src/transfer/service.js';
import { createSecretBox } from '../../src/modules/links/secret-box.js';
import { ARCHIVE_VERSION, TABLE_NAMES } from '../../src/transfer/archive-format.js';
import { cardBody, startTestApp, type TestApp } from '../support/test-app.js';
import { adminToken, expectStatus, familyIdOf, familyOf, mustAdd, newUser, putCatalogueCard } from '../support/fixtures.js';
import { makeAudio, pollTranscode, startMediaStore, uploadAudio } from '../support/media.js';
import { addMedia, archiveRow, bomb, editTable, repack, rowsOf, unpack, withColumnsOf, type Entry } from '../support/archives.js';
import { linkCardRow, linkRow } from '../support/rows.js';
import { testDialect, type TestDialect } from '../support/test-database.js';

/**
 * Moving house (issue 13): an instance with media exported, imported into an empty store of
 * the other kind (SQLite to PostgreSQL, PostgreSQL to SQLite; the same kind again when the
 * suite has no PostgreSQL), exported again: the archives are the same bytes, and every read
 * route answers every user alike, with the tokens of the old instance. Damaged, newer and
 * conflicting archives are refused, and the target's export is the same bytes after.
 */
const SOURCE = testDialect();
const TARGET: TestDialect = SOURCE === 'postgres' ? 'sqlite' : process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

const ALL = 'user:content:manage family:library:manage';
const SECRET = 'the-shared-media-url-secret-of-both';

let keyDir: string;
let s3: Awaited<ReturnType<typeof startMediaStore>> | undefined;
let source: TestApp;
let target: TestApp;

/**
 * The same settings on both instances: the key file carried over, the same address and media
 * secret. `media` is the media store's settings (the source's is S3 on the PostgreSQL project).
 */
async function instance(dialect: TestDialect, media: Record<string, string> = {}): Promise<TestApp> {
  return startTestApp(
    { SIGNING_KEY_FILE: path.join(keyDir, 'signing-key.json'), MEDIA_URL_SECRET: SECRET, PUBLIC_BASE_URL: 'http://cardshelf.test', ...media },
    { dialect },
  );
}

/** What an instance would be given to import: its own database and media store. */
function transferOf(t: TestApp) {
  const store = openStore(t.config.database);
  return {
    service: createTransferService(store, openMediaStore(t.config.media)),
    close: () => store.db.destroy(),
  };
}

async function importInto(t: TestApp, archive: Buffer, skipConflicts = false): Promise<ImportReport> {
  const { service, close } = transferOf(t);
  try {
    return await service.importArchive(() => Readable.from([archive]), {
      skipConflicts,
      maxMediaBytes: Math.max(t.config.media.maxAudioBytes, t.config.media.maxImageBytes),
    });
  } finally {
    await close();
  }
}

/** The SHA-256 of every object in an instance's media store. */
async function mediaOf(t: TestApp): Promise<string[]> {
  const names: string[] = [];
  for await (const object of openMediaStore(t.config.media).list()) names.push(object.sha256);
  return names.sort();
}

/** `GET /admin/export`, the archive's bytes. */
async function exportOf(t: TestApp, query = ''): Promise<Buffer> {
  const r = await t.app.inject({ method: 'GET', url: `/admin/export${query}`, headers: { authorization: `Bearer ${await adminToken(t)}` } });
  expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
  expect(r.headers['content-type']).toBe('application/gzip');
  return r.rawPayload;
}

const png = (size: number, color: string): Promise<Buffer> =>
  sharp({ create: { width: size, height: size, channels: 4, background: color } }).png().toBuffer();

interface World {
  users: string[];
  cards: string[];
  groups: string[];
  wishlists: { id: string; shareId: string }[];
  uploads: string[];
  media: string[];
  familyImages: string[];
  familyId: string;
  /** A player of the family, renamed and set, that never reported; its credential. */
  player: { deviceId: string; token: string };
  /** A linked service of the first user, signed in, with a card pulled through it. */
  linkId: string;
}

/** A small instance with every kind of record and real media (audio transcoded by ffmpeg, images). */
async function seed(t: TestApp): Promise<World> {
  const [alice, bob, carol, dave] = [newUser('mv-alice'), newUser('mv-bob'), newUser('mv-carol'), newUser('mv-dave')] as [string, string, string, string];
  const w: World = {
    users: [alice, bob, carol, dave],
    cards: [],
    groups: [],
    wishlists: [],
    uploads: [],
    media: [],
    familyImages: [],
    familyId: '',
    player: { deviceId: '', token: '' },
    linkId: 'mv-link-alice',
  };
  const token = (u: string) => t.token(u, ALL);
  const admin = await adminToken(t);
  w.familyId = await familyOf(t, [alice, bob], ['mv-player-1']);
  // A registered player with a name and settings of its own (issue 22); it never reports.
  const registered = expectStatus(await t.call('POST', '/device-v2/devices/mine', { token: await token(alice), body: { name: 'Kitchen' } }), 201).body;
  w.player = { deviceId: registered.device.deviceId as string, token: registered.credential.accessToken as string };
  const settings = { name: 'Big kitchen', config: { maxVolumeLimit: '12', repeatAll: true, nightTime: '20:30' } };
  expectStatus(await t.call('PUT', `/device-v2/${w.player.deviceId}/config`, { token: await token(bob), body: settings }), 200);
  const shortcuts = { modes: { day: { content: [] }, night: { content: [] } } };
  expectStatus(await t.call('PUT', `/device-v2/${w.player.deviceId}/shortcuts`, { token: await token(alice), body: { shortcuts } }), 200);
  const free = await putCatalogueCard(t, 'free');
  const club = await putCatalogueCard(t, 'club');
  const premium = await putCatalogueCard(t, 'premium');
  w.cards.push(free, club, premium);

  // Audio: uploaded, transcoded, and a card playing it.
  const { uploadId } = await uploadAudio(t, await token(alice), await makeAudio(1));
  const done = expectStatus(await pollTranscode(t, await token(alice), uploadId), 200).body.transcode;
  w.uploads.push(uploadId);
  w.media.push(done.transcodedSha256 as string);
  const cover = expectStatus(
    await t.call('POST', '/media/coverImage/user/me/upload?coverType=myo', { token: await token(alice), rawBody: await png(64, '#c03'), headers: { 'content-type': 'image/png' } }),
    200,
  ).body.coverImage;
  w.media.push(cover.mediaId as string);
  const icon = expectStatus(
    await t.call('POST', '/media/displayIcons/user/me/upload', { token: await token(bob), rawBody: await png(16, '#3c0'), headers: { 'content-type': 'image/png' } }),
    200,
  ).body.displayIcon;
  w.media.push(icon.mediaId as string);
  expectStatus(await t.call('POST', '/admin/media/displayIcons?title=Sun&tags=sky,day', { token: admin, rawBody: await png(16, '#fc0'), headers: { 'content-type': 'image/png' } }), 200);
  const image = expectStatus(
    await t.call('POST', '/media/family/images', { token: await token(alice), rawBody: await png(32, '#06c'), headers: { 'content-type': 'image/png' } }),
    200,
  ).body;
  w.familyImages.push(image.imageId as string);

  const track = { key: '01', title: 'Tone', type: 'audio', trackUrl: `service:#${done.transcodedSha256}` };
  const made = [
    [alice, cardBody('Tone', { metadata: { cover: { imageL: cover.mediaUrl } }, content: { chapters: [{ key: '01', title: 'One', display: { icon16x16: `yoto:#${icon.mediaId}` }, tracks: [track] }] } })],
    [alice, cardBody('Second')],
    [bob, cardBody('Bob made this')],
    [carol, cardBody('Carol alone')],
  ] as const;
  for (const [user, body] of made) {
    w.cards.push(expectStatus(await t.call('POST', '/content', { token: await token(user), body }), 201).body.card.cardId as string);
  }
  expectStatus(await t.call('DELETE', `/content/${w.cards.at(-3)}`, { token: await token(alice) }), 200);

  await mustAdd(t, alice, free);
  await mustAdd(t, bob, club);
  await mustAdd(t, carol, free);
  for (const [user, name, items] of [
    [alice, 'Bedtime', [free, club]],
    [bob, 'Ours', [w.cards[3]!, club]],
    [carol, 'Mine', [free]],
  ] as const) {
    const r = await t.call('POST', '/card/family/library/groups', {
      token: await token(user),
      body: { name, imageId: user === alice ? image.imageId : 'stars', items: items.map((contentId) => ({ contentId })) },
    });
    w.groups.push(expectStatus(r, 201).body.id as string);
  }
  // Alice's named (format version 4): the name travels with it.
  for (const [user, content, name] of [
    [alice, [{ item: free, note: 'birthday' }, { item: `service:#${done.transcodedSha256}` }], 'Birthday'],
    [carol, [{ item: premium }], undefined],
  ] as const) {
    const r = expectStatus(await t.call('POST', '/wishlists', { token: await token(user), body: { content, name } }), 201).body;
    w.wishlists.push({ id: r.wishlistId as string, shareId: r.shareId as string });
  }
  // A linked service, as a sign-in leaves it (its tokens sealed), and the card a pull made.
  const store = openStore(t.config.database);
  try {
    const box = createSecretBox('the-old-instance-secret');
    const at = '2026-02-01T00:00:00.000Z';
    await store.db
      .insertInto('links')
      .values(linkRow({
        link_id: w.linkId, user_id: alice, name: 'The other shelf', api_base_url: 'https://api.other.example', auth_base_url: 'https://login.other.example',
        client_id: 'other-client', state: 'linked', poll_interval: 5, refresh_token_sealed: box.seal('refresh', w.linkId),
        access_token_sealed: box.seal('access', w.linkId), access_expires_at: '2999-01-01T00:00:00.000Z', created_at: at, updated_at: at,
      }))
      .execute();
    await store.db
      .insertInto('link_cards')
      .values(linkCardRow({ link_id: w.linkId, remote_card_id: 'remote-tone', local_card_id: w.cards[3]!, remote_fingerprint: 'a'.repeat(64), local_version: 1, updated_at: at }))
      .execute();
  } finally {
    await store.db.destroy();
  }
  // Everyone's family exists before the export (the operator's too): a read must not make a
  // stub family on one side only.
  for (const user of [...w.users, 'auth0|operator']) await familyIdOf(t, user);
  return w;
}

/** An answer as a client sees it, with signed URLs' expiry and signature made comparable. */
function normalise(text: string): string {
  return text.replace(/expires=\d+(&|&amp;|\\u0026)signature=[\w-]+/g, 'expires=E$1signature=S');
}

/**
 * A link arrives failed ("moved to another instance: link it again", test/api/transfer-links.test.ts):
 * its sign-in stays behind. Everything else about it reads the same.
 */
function settleLinks(body: string): string {
  const answer = JSON.parse(body) as { link?: Record<string, unknown>; links?: Record<string, unknown>[] };
  const settle = ({ state: _s, reason: _r, updatedAt: _u, ...rest }: Record<string, unknown>) => rest;
  if (answer.link) answer.link = settle(answer.link);
  if (answer.links) answer.links = answer.links.map(settle);
  return JSON.stringify(answer);
}

/** Routes whose answers are compared settled: what differs after the move by design is set aside. */
const SETTLED: Record<string, (body: string) => string> = { '/user/links': settleLinks, '/user/links/{linkId}': settleLinks };

async function read(t: TestApp, token: string | undefined, url: string, settle: (body: string) => string = (b) => b): Promise<string> {
  const r = await t.app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const body = r.headers['content-type']?.toString().startsWith('application/json') ? normalise(settle(r.body)) : r.rawPayload.toString('base64');
  return JSON.stringify({ status: r.statusCode, type: r.headers['content-type'], location: normalise(String(r.headers.location ?? '')), body });
}

/** Every read route, as a pattern of the OpenAPI document, with the URLs that exercise it. */
function readsOf(w: World, signed: string[]): Record<string, string[]> {
  const cards = w.cards;
  return {
    '/healthz': ['/healthz'],
    '/readyz': ['/readyz'],
    '/.well-known/jwks.json': ['/.well-known/jwks.json'],
    '/content/mine': ['/content/mine', '/content/mine?showdeleted=true'],
    '/card/mine': ['/card/mine'],
    '/content/{cardId}': cards.flatMap((id) => [`/content/${id}`, `/content/${id}?playable=true`]),
    '/card/{cardId}': cards.flatMap((id) => [`/card/${id}`, `/card/${id}?playable=true`]),
    '/user/family': ['/user/family', '/user/family?showhistory=true&allowStub=true'],
    '/user/family/members': ['/user/family/members'],
    '/user/family/export': ['/user/family/export'],
    '/card/family/library': ['/card/family/library', '/card/family/library?showdeleted=true&view=groups'],
    '/card/family/library/groups': ['/card/family/library/groups'],
    '/card/family/library/groups/{groupId}': w.groups.map((id) => `/card/family/library/groups/${id}`),
    '/wishlists': ['/wishlists', '/wishlists?format=raw'],
    '/wishlists/{wishlistId}': w.wishlists.flatMap(({ id }) => [`/wishlists/${id}`, `/wishlists/${id}?format=raw`]),
    '/wishlists/shared/{shareId}': w.wishlists.map(({ shareId }) => `/wishlists/shared/${shareId}`),
    '/media/upload/{uploadId}/transcoded': w.uploads.map((id) => `/media/upload/${id}/transcoded`),
    '/media/files/{hash}': signed,
    '/media/public/{mediaId}': w.media.map((id) => `/media/public/${id}`),
    '/media/displayIcons/user/me': ['/media/displayIcons/user/me'],
    '/media/displayIcons/user/yoto': ['/media/displayIcons/user/yoto'],
    '/media/family/images': ['/media/family/images'],
    '/media/family/images/{imageId}': w.familyImages.map((id) => `/media/family/images/${id}`),
    '/admin/export': ['/admin/export', `/admin/export?familyId=${w.familyId}`],
    // Its player's name and settings travel (archive version 2); it never reported, so its status
    // is the same too (a last report does not travel).
    '/device-v2/devices/mine': ['/device-v2/devices/mine'],
    '/device-v2/{deviceId}/config': [`/device-v2/${w.player.deviceId}/config`, '/device-v2/mv-player-1/config'],
    '/device-v2/{deviceId}/status': [`/device-v2/${w.player.deviceId}/status`, '/device-v2/mv-player-1/status'],
    // A link travels named, without its sign-in: compared settled (SETTLED).
    '/user/links/presets': ['/user/links/presets'],
    '/user/links': ['/user/links'],
    '/user/links/{linkId}': [`/user/links/${w.linkId}`],
  };
}

/**
 * GET routes that are not reads: asking for an upload URL records an upload; the live events are
 * a stream, and their log is not carried by archives (a stream resumed on the new instance gets
 * `reset`, and the client reads everything again).
 */
// Not reads of what moves: an upload URL is made anew, a stream follows, invitations are
// short-lived secrets of the old server that stay behind (src/transfer/accounts.ts), and so are a
// link's jobs, its history (src/transfer/link-tables.ts).
const NOT_READS = new Set([
  '/media/transcode/audio/uploadUrl',
  '/user/family/events',
  '/user/invitations',
  '/user/links/{linkId}/jobs',
  '/user/links/{linkId}/jobs/{jobId}',
]);

beforeAll(async () => {
  keyDir = await mkdtemp(path.join(tmpdir(), 'cardshelf-key-'));
  // The media store of the project: S3 (s3rver) on PostgreSQL, so that archives also move
  // media from an object store to the file system.
  s3 = await startMediaStore();
  source = await instance(SOURCE, s3.env);
  target = await instance(TARGET);
}, 60_000);
afterAll(async () => {
  await source?.close();
  await target?.close();
  await s3?.close();
  await rm(keyDir, { recursive: true, force: true });
});

describe(`moving house: ${SOURCE} to ${TARGET}`, { timeout: 120_000 }, () => {
  let world: World;
  let first: Buffer;

  it('export, import into an empty store of the other kind, export again: the same archive', async () => {
    world = await seed(source);
    first = await exportOf(source);
    const entries = await unpack(first);
    expect(entries[0]!.name).toBe('cardshelf-archive.json');
    expect(entries.at(-1)!.name).toBe('manifest.json');
    expect(entries.filter((e) => e.name.startsWith('media/')).length).toBeGreaterThanOrEqual(5);
    expect(rowsOf(entries, 'transcodes').length).toBeGreaterThan(0);

    const report = await importInto(target, first);
    expect(report.rows.cards).toBe(world.cards.length);
    expect(report.mediaObjects).toBe(entries.filter((e) => e.name.startsWith('media/')).length);
    const second = await exportOf(target);
    expect(second.equals(first)).toBe(true);
  });

  it('every read route answers every user alike, with the tokens of the old instance', async () => {
    const routes = (t: TestApp) => Object.entries((t.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths)
      .filter(([p, ops]) => 'get' in ops && !NOT_READS.has(p))
      .map(([p]) => p);
    // Signed media URLs, as a playable card read hands them out (the same on both: same secret).
    const playable = await source.call('GET', `/content/${world.cards[3]}?playable=true`, { token: await source.token(world.users[0]!, ALL) });
    const signed = [...JSON.stringify(playable.body).matchAll(/http:\/\/cardshelf\.test(\/media\/files\/[^"]+)/g)].map((m) => m[1]!);
    expect(signed.length).toBeGreaterThan(0);
    const reads = readsOf(world, signed);
    expect(Object.keys(reads).sort()).toEqual(routes(source).sort());

    const tokens = await Promise.all([...world.users.map((u) => source.token(u, ALL)), adminToken(source), undefined]);
    let compared = 0;
    for (const token of tokens) {
      for (const [route, urls] of Object.entries(reads)) {
        for (const url of urls) {
          const [before, after] = [await read(source, token, url, SETTLED[route]), await read(target, token, url, SETTLED[route])];
          expect(after, `${route}: ${url}`).toBe(before);
          compared += 1;
        }
      }
    }
    expect(compared).toBeGreaterThan(300);
  });

  it("a player travels with its name and settings, never its credential: its old token is refused until it is registered again", async () => {
    const rows = rowsOf(await unpack(first), 'family_devices');
    const row = rows.find((d) => d.device_id === world.player.deviceId)!;
    expect(Object.keys(row)).toEqual(['device_id', 'family_id', 'added_at', 'position', 'name', 'device_type', 'config', 'shortcuts', 'registered_by']);
    expect(row).toMatchObject({ name: 'Big kitchen', device_type: 'cardshelf-browser', registered_by: world.users[0] });
    expect(JSON.parse(String(row.config))).toMatchObject({ maxVolumeLimit: '12', repeatAll: true, nightTime: '20:30' });

    const member = await source.token(world.users[1]!, ALL);
    const seen = async (t: TestApp) => expectStatus(await t.call('GET', `/device-v2/${world.player.deviceId}/config`, { token: member }), 200).body.device;
    const [before, after] = [await seen(source), await seen(target)];
    expect(after).toEqual(before);
    expect(after).toMatchObject({ name: 'Big kitchen', config: { maxVolumeLimit: '12', repeatAll: true } });
    expect(after.shortcuts.versionId).toMatch(/^[0-9a-f]{24}$/);
    // The same signing key on both, so only the missing credential refuses the player's token.
    const report = { playbackStatus: 'stopped', userVolumePercentage: 40 };
    expectStatus(await source.call('GET', '/card/family/library', { token: world.player.token }), 200);
    for (const [method, url, body] of [
      ['GET', '/card/family/library', undefined],
      ['PUT', `/device-v2/${world.player.deviceId}/status`, report],
    ] as const) {
      expect((await target.call(method, url, { token: world.player.token, body })).status, url).toBe(401);
    }
    expect(expectStatus(await target.call('GET', `/device-v2/${world.player.deviceId}/status`, { token: member }), 200).body.isOnline).toBe(false);
  });

  it('an archive of format version 1 (players without their settings) still imports; its players take the defaults', async () => {
    let entries = await withColumnsOf(await unpack(first), 1);
    const older = (e: Entry): Entry =>
      e.name === 'cardshelf-archive.json' || e.name === 'manifest.json'
        ? { ...e, data: Buffer.from(e.data.toString().replace(`"version":${ARCHIVE_VERSION}`, '"version":1')) }
        : e;
    entries = entries.map(older);
    const fresh = await instance(TARGET);
    try {
      const report = await importInto(fresh, await repack(entries, { fixManifest: true }));
      expect(report.rows.family_devices).toBe(2);
      const member = await source.token(world.users[1]!, ALL);
      const device = expectStatus(await fresh.call('GET', `/device-v2/${world.player.deviceId}/config`, { token: member }), 200).body.device;
      // A device listed by id alone: its id for a name, the documented defaults.
      expect(device.name).toBe(world.player.deviceId);
      expect(device.config).toMatchObject({ maxVolumeLimit: '16', repeatAll: false });
      // The rows the new instance writes are of the current version, the new columns null.
      const again = rowsOf(await unpack(await exportOf(fresh)), 'family_devices').find((d) => d.device_id === world.player.deviceId);
      expect(again).toMatchObject({ name: null, config: null, shortcuts: null, registered_by: null });
    } finally {
      await fresh.close();
    }
  });

  it("a member's own export holds what that member may read, and moves to a fresh instance", async () => {
    const alice = world.users[0]!;
    const r = await source.app.inject({ method: 'GET', url: '/user/family/export', headers: { authorization: `Bearer ${await source.token(alice, ALL)}` } });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-disposition']).toBe(`attachment; filename="cardshelf-family-${world.familyId}.tar.gz"`);
    const entries = await unpack(r.rawPayload);
    const owners = new Set(rowsOf(entries, 'cards').map((c) => c.user_id));
    expect([...owners].sort()).toEqual([world.users[0], world.users[1]].sort());
    expect(rowsOf(entries, 'families').map((f) => f.family_id)).toEqual([world.familyId]);
    expect(rowsOf(entries, 'wishlists').map((x) => x.user_id)).toEqual([alice]);
    // What Alice may read, not what Bob keeps: his icons, uploads and holdings stay out.
    expect(rowsOf(entries, 'display_icons')).toEqual([]);
    expect(new Set(rowsOf(entries, 'media_holdings').map((h) => h.owner_id))).toEqual(new Set([alice, `family:${world.familyId}`]));
    expect(entries.some((e) => e.name === `media/${world.familyImages[0]}`)).toBe(true);

    const fresh = await instance(TARGET);
    try {
      await importInto(fresh, r.rawPayload);
      const again = await unpack(await exportOf(fresh, `?familyId=${world.familyId}`));
      // Every row comes back the same but transcodes, which a family's archive does not bring as
      // they are: they are queued anew (the worker may have made them again by now). Other
      // members' holdings do not travel in a member's archive: an object that only one of them
      // made public (Bob's icon, named in Alice's card) is public no more on the new instance,
      // and the family's export there leaves it out.
      for (const table of TABLE_NAMES.filter((name) => name !== 'media_objects' && name !== 'transcodes')) {
        expect(rowsOf(again, table), table).toEqual(rowsOf(entries, table));
      }
      const hashes = (es: typeof entries) => rowsOf(es, 'media_objects').map((o) => o.sha256);
      expect(hashes(entries).filter((h) => !hashes(again).includes(h))).toEqual([world.media[2]]);
      const jobs = (all: Entry[]) => rowsOf(all, 'transcodes').map((t) => `${t.source_sha256} ${t.loudnorm}`);
      expect(jobs(entries).length).toBeGreaterThan(0);
      expect(jobs(again)).toEqual(jobs(entries));
      const made = new Map(rowsOf(entries, 'transcodes').map((t) => [t.source_sha256, t.transcoded_sha256]));
      for (const job of rowsOf(again, 'transcodes')) {
        expect(['queued', 'running', 'done']).toContain(job.status);
        if (job.status === 'done') expect(job.transcoded_sha256).toBe(made.get(job.source_sha256));
      }
      const token = await source.token(alice, ALL);
      for (const url of ['/content/mine', '/user/family?showhistory=true', '/wishlists?format=raw', '/media/family/images', '/media/displayIcons/user/me']) {
        expect(await read(fresh, token, url), url).toBe(await read(source, token, url));
      }
    } finally {
      await fresh.close();
    }
  });

  it('answers 404 for an unknown family, 403 without the scope', async () => {
    const r = await source.call('GET', '/admin/export?familyId=no-such-family', { token: await adminToken(source) });
    expect(r.status).toBe(404);
    const user = await source.call('GET', '/admin/export', { token: await source.token(world.users[0]!, ALL) });
    expect(user.status).toBe(403);
    const viewer = await source.call('GET', '/user/family/export', { token: await source.token(world.users[0]!, 'family:library:view') });
    expect(viewer.status).toBe(403);
  });
});

describe(`refusals leave the target as it was (${TARGET})`, { timeout: 120_000 }, () => {
  let archive: Buffer;
  let before: Buffer;
  let mediaBefore: string[];

  beforeAll(async () => {
    archive = await exportOf(source);
    before = await exportOf(target);
    mediaBefore = await mediaOf(target);
  });

  async function refused(bytes: Buffer, message: RegExp, kind: typeof ArchiveRefused | typeof ImportConflicts = ArchiveRefused): Promise<void> {
    const err = await importInto(target, bytes).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(kind);
    expect((err as Error).message).toMatch(message);
    expect((await exportOf(target)).equals(before)).toBe(true);
    expect(await mediaOf(target)).toEqual(mediaBefore);
  }

  it('a flipped byte, a cut-off file, a changed row, a missing manifest', async () => {
    const flipped = Buffer.from(archive);
    flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
    await refused(flipped, /damaged archive/);
    await refused(archive.subarray(0, Math.floor(archive.length * 0.8)), /damaged archive/);

    const entries = await unpack(archive);
    const cards = entries.find((e) => e.name.startsWith('tables/02-cards/'))!;
    const changed = entries.map((e) => (e === cards ? { ...e, data: Buffer.from(e.data.toString().replace('"deleted":0', '"deleted":1')) } : e));
    await refused(await repack(changed), /tables\/02-cards\/000001\.ndjson is not what the manifest lists/);
    await refused(await repack(entries.filter((e) => e.name !== 'manifest.json')), /ends before its manifest/);
    const media = entries.find((e) => e.name.startsWith('media/'))!;
    const badBlob = entries.map((e) => (e === media ? { ...e, data: Buffer.concat([e.data, Buffer.from('x')]) } : e));
    await refused(await repack(badBlob, { fixManifest: true }), /do not have that SHA-256/);
  });

  it('a bad record, even with checksums that hold', async () => {
    const entries = await unpack(archive);
    const bad = entries.map((e) =>
      e.name.startsWith('tables/02-cards/') ? { ...e, data: Buffer.from(e.data.toString().replace(/"in_club":\d/, '"in_club":"yes"')) } : e,
    );
    await refused(await repack(bad, { fixManifest: true }), /bad record in tables\/02-cards\/000001\.ndjson, line 1: in_club is not an integer/);
  });

  it('a key twice in the archive, or a reference to nothing, is found before anything is written (media included)', async () => {
    const entries = await unpack(archive);
    // The last table of an archive of version 1 (family images): a duplicate there used to fail in the
    // database after the media and every other table had been written.
    const last = entries.filter((e) => e.name.startsWith('tables/14-family_images/')).at(-1)!;
    expect(last.name).toMatch(/^tables\/14-family_images/);
    const [first] = last.data.toString().split('\n');
    const twice = entries.map((e) => (e === last ? { ...e, data: Buffer.concat([e.data, Buffer.from(`${first}\n`)]) } : e));
    const wishlists = rowsOf(entries, 'wishlists');
    const cases: [Entry[], RegExp][] = [
      [twice, /^duplicate key in the archive: family_images \(family_id, image_id\) \S+ \S+ is there twice \(tables\/14-family_images\/000001\.ndjson, line 2\)$/],
      [
        await editTable(entries, 'wishlists', (rows) => [...rows, { ...rows[0]!, wishlist_id: 'zzzz-another-wishlist' }]),
        /^duplicate key in the archive: two rows of wishlists have the same \(share_id\)$/,
      ],
      [
        await editTable(entries, 'library_records', (rows) => [...rows, { ...rows[0]!, record_id: 'zz-no-family', family_id: 'no-such-family' }]),
        /^dangling reference: library_records\.family_id names family no-such-family, which is neither in the archive nor here \(tables\/07-library_records\/000001\.ndjson, line \d+\)$/,
      ],
      [
        await editTable(entries, 'library_records', (rows) => [...rows, { ...rows[0]!, record_id: 'zz-no-card', card_id: 'nocard' }]),
        /^dangling reference: library_records\.card_id names card nocard, which is neither in the archive nor here/,
      ],
      [
        await editTable(entries, 'media_holdings', (rows) => [...rows, { ...rows[0]!, sha256: 'f'.repeat(64) }]),
        new RegExp(`^dangling reference: media_holdings\\.sha256 names media object ${'f'.repeat(64)}, which is neither in the archive nor here`),
      ],
    ];
    expect(wishlists.length).toBeGreaterThan(0);
    const fresh = await instance(TARGET);
    try {
      const empty = await exportOf(fresh);
      for (const [hostile, message] of cases) {
        const err = await importInto(fresh, await repack(hostile, { fixManifest: true })).then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(ArchiveRefused);
        expect((err as Error).message).toMatch(message);
        expect((await exportOf(fresh)).equals(empty)).toBe(true);
        expect(await mediaOf(fresh)).toEqual([]);
      }
    } finally {
      await fresh.close();
    }
  });

  it('an entry larger than it can be, refused before it is read: a manifest of 1.5 GB, a media object over the limit', async () => {
    const entries = (await unpack(archive)).filter((e) => e.name !== 'manifest.json');
    const manifestBomb = await bomb(entries, 'manifest.json', 1536 * 1024 * 1024);
    expect(manifestBomb.length).toBeLessThan(8 * 1024 * 1024);
    await refused(manifestBomb, /^damaged archive: manifest\.json is 1610612736 bytes, more than it can be \(\d+\)$/);
    // A batch of rows that unpacks to 256 MiB.
    const header = entries.filter((e) => !e.name.startsWith('tables/'));
    await refused(await bomb(header, 'tables/02-cards/000001.ndjson', 256 * 1024 * 1024), /^damaged archive: tables\/02-cards\/000001\.ndjson is 268435456 bytes, more than it can be/);
    // Media larger than the target takes (its MEDIA_MAX_* settings).
    const { service, close } = transferOf(target);
    try {
      const err = await service.importArchive(() => Readable.from([archive]), { skipConflicts: true, maxMediaBytes: 1024 }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ArchiveRefused);
      expect((err as Error).message).toMatch(/^media\/[0-9a-f]{64} is \d+ bytes, larger than this instance stores \(MEDIA_MAX_AUDIO_BYTES, MEDIA_MAX_IMAGE_BYTES: 1024\)$/);
    } finally {
      await close();
    }
    expect((await exportOf(target)).equals(before)).toBe(true);
  });

  it('an archive of a newer format version, with a message saying so', async () => {
    const entries = await unpack(archive);
    const newer = entries.map((e) =>
      e.name === 'cardshelf-archive.json' ? { ...e, data: Buffer.from(e.data.toString().replace(`"version":${ARCHIVE_VERSION}`, `"version":${ARCHIVE_VERSION + 1}`)) } : e,
    );
    await refused(await repack(newer), new RegExp(`format version ${ARCHIVE_VERSION + 1}, newer than this Cardshelf reads \\(up to ${ARCHIVE_VERSION}\\)`));
  });

  it('ids already there: refused, or with skipConflicts left out (and nothing else changes)', async () => {
    await refused(archive, /records of the archive conflict with data already there/, ImportConflicts);
    const report = await importInto(target, archive, true);
    expect(Object.entries(report.rows).filter(([, n]) => n > 0)).toEqual([]);
    expect(report.skipped.cards).toBe(rowsOf(await unpack(archive), 'cards').length);
    expect((await exportOf(target)).equals(before)).toBe(true);
  });
});


/**
 * A family's archive (issue 17, row 2) may hold only that family, its members' rows and the
 * media its rows name: hand-made ones that reach beyond it are refused whole. The family is
 * M's, new to the target; A (alice) is a user of the target, in another family.
 */
describe(`a family archive holds that family only (${TARGET})`, { timeout: 180_000 }, () => {
  let world: { alice: string; mallory: string; familyId: string; catalogueCard: string; imageId: string };
  let base: Entry[];
  let before: Buffer;
  let mediaBefore: string[];

  beforeAll(async () => {
    const all = await unpack(await exportOf(source));
    // A user of the target (imported from the source), in a family of their own there.
    const alice = String(rowsOf(all, 'wishlists')[0]!.user_id);
    const catalogueCard = String(rowsOf(all, 'cards').find((c) => c.origin === 'catalogue')!.card_id);
    const mallory = newUser('mallory');
    const token = await source.token(mallory, ALL);
    const familyId = await familyOf(source, [mallory], ['mallory-player']);
    expectStatus(await source.call('POST', '/content', { token, body: cardBody('Mine') }), 201);
    const { uploadId } = await uploadAudio(source, token, await makeAudio(2));
    expectStatus(await pollTranscode(source, token, uploadId), 200);
    const image = expectStatus(
      await source.call('POST', '/media/family/images', { token, rawBody: await png(24, '#609'), headers: { 'content-type': 'image/png' } }),
      200,
    ).body;
    world = { alice, mallory, familyId, catalogueCard, imageId: image.imageId as string };
    const r = await source.app.inject({ method: 'GET', url: '/user/family/export', headers: { authorization: `Bearer ${token}` } });
    expect(r.statusCode).toBe(200);
    base = await unpack(r.rawPayload);
    before = await exportOf(target);
    mediaBefore = await mediaOf(target);
  });

  async function refused(entries: Entry[], message: RegExp): Promise<void> {
    const err = await importInto(target, await repack(entries, { fixManifest: true })).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ArchiveRefused);
    expect((err as Error).message).toMatch(message);
    expect((await exportOf(target)).equals(before)).toBe(true);
    expect(await mediaOf(target)).toEqual(mediaBefore);
  }

  const first = (table: string): Record<string, unknown> => rowsOf(base, table)[0]!;

  it('refuses rows that are not the family\'s: catalogue cards, other users\' cards, wishlists and media, another family\'s rows', async () => {
    const { alice, familyId, catalogueCard } = world;
    const archive = `the family archive of ${familyId}`;
    await refused(
      await editTable(base, 'cards', (rows) => [...rows, { ...rows[0]!, card_id: 'zzfree', origin: 'catalogue', is_free: 1 }]),
      new RegExp(`^${archive} holds catalogue card zzfree: a family's archive holds its members' own cards only`),
    );
    await refused(
      await editTable(base, 'cards', (rows) => [...rows, { ...rows[0]!, card_id: 'zzalice', user_id: alice }]),
      new RegExp(`^${archive} holds cards of ${escape(alice)}, who is not one of its members`),
    );
    const wishlist = archiveRow('wishlists', { wishlist_id: 'zz-planted', share_id: 'zz-planted-share', user_id: alice, content: '[]', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' });
    await refused(
      await editTable(base, 'wishlists', (rows) => [...rows, wishlist]),
      new RegExp(`^${archive} holds wishlists of ${escape(alice)}, who is not one of its members`),
    );
    // A holding charged to A (her quota), and one of M's own that is not its object's size.
    const holding = first('media_holdings');
    await refused(
      await editTable(base, 'media_holdings', (rows) => [...rows, { ...holding, owner_id: alice }]),
      new RegExp(`^${archive} holds media of ${escape(alice)}, who is not one of its members`),
    );
    await refused(
      await editTable(base, 'media_holdings', (rows) => rows.map((h) => (h === rows[0] ? { ...h, size: 10 * 1024 ** 3 } : h))),
      /^media_holdings says [0-9a-f]{64} is 10737418240 bytes, its bytes are \d+/,
    );
    // Another family's library, with a card of the target's catalogue.
    await refused(
      await editTable(base, 'library_records', (rows) => [
        ...rows,
        { record_id: 'zz-other', family_id: 'another-family', card_id: catalogueCard, provenance_id: 'x', reason: 'added', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' },
      ]),
      new RegExp(`holds library_records of another family, another-family|names family another-family`),
    );
    await refused(
      await editTable(base, 'families', (rows) => [...rows, { ...rows[0]!, family_id: 'zz-second-family' }]),
      new RegExp(`^${archive} holds another family, zz-second-family`),
    );
  });

  it('refuses a membership that moves a user of the target into the family', async () => {
    const { alice, familyId } = world;
    await refused(
      await editTable(base, 'family_memberships', (rows) => [...rows, { ...rows[0]!, user_id: alice }]),
      new RegExp(`^the family archive of ${familyId} would move ${escape(alice)}, a member of family \\S+ here, into ${familyId}`),
    );
  });

  it('refuses media its rows do not name, media it names without its bytes, and bytes that are not what their row says', async () => {
    const { familyId } = world;
    const unnamed = await addMedia(base, await png(8, '#123'), 'image/png');
    await refused(unnamed.entries, new RegExp(`^the family archive of ${familyId} carries media object ${unnamed.sha256}, which none of its rows names$`));

    // A family image whose bytes are HTML said to be a PNG (it would be served as stated).
    const html = await addMedia(base, Buffer.from('<!doctype html><script>alert(document.cookie)</script>'), 'image/png');
    const image = first('family_images');
    const named = await editTable(html.entries, 'family_images', (rows) => [...rows, { ...image, image_id: html.sha256, size: 54 }]);
    await refused(named, new RegExp(`^media object ${html.sha256} cannot be stored: its bytes are of no type Cardshelf stores \\(it says image/png\\)`));

    // A family image of the target (A's family's) that the archive does not carry.
    const theirs = String(rowsOf(await unpack(await exportOf(target)), 'family_images')[0]!.image_id);
    const borrowed = await editTable(base, 'family_images', (rows) => [...rows, { ...image, image_id: theirs }]);
    await refused(borrowed, new RegExp(`^the family archive of ${familyId} names media object ${theirs} in family_images\\.image_id without carrying its bytes`));
  });

  it('imports as it was made; its transcodes are queued anew, never taken as they are', async () => {
    // The transcode row says M's upload made M's family image: a later upload of that source
    // anywhere would be answered with it.
    const job = first('transcodes');
    const lying = await editTable(base, 'transcodes', (rows) => rows.map((t) => ({ ...t, transcoded_sha256: world.imageId })));
    expect(job.status).toBe('done');
    const fresh = await instance(TARGET);
    try {
      const report = await importInto(fresh, await repack(lying, { fixManifest: true }));
      expect(report.rows.cards).toBe(1);
      const jobs = rowsOf(await unpack(await exportOf(fresh)), 'transcodes');
      expect(jobs.map((t) => t.source_sha256)).toEqual([job.source_sha256]);
      expect(jobs[0]!.transcoded_sha256).not.toBe(world.imageId);
      expect(['queued', 'running', 'done']).toContain(jobs[0]!.status);
    } finally {
      await fresh.close();
    }
  });
});

const escape = (text: string): string => text.replace(/[|\\{}()[\]^$+*?.]/g, '\\$&');
