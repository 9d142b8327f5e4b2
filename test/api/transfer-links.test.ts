import { gunzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.js';
import { openMediaStore } from '../../src/media-store/open-media-store.js';
import { createSecretBox } from '../../src/modules/links/secret-box.js';
import { ARCHIVE_VERSION } from '../../src/transfer/archive-format.js';
import { ArchiveRefused, type ImportReport } from '../../src/transfer/importer.js';
import { createTransferService } from '../../src/transfer/service.js';
import { cardBody, startTestApp, type TestApp } from '../support/test-app.js';
import { adminToken, expectStatus, familyOf, newUser } from '../support/fixtures.js';
import { editTable, repack, rowsOf, unpack, type Entry } from '../support/archives.js';
import { linkCardRow, linkJobRow, linkRow, type Row } from '../support/rows.js';
import { testDialect, type TestDialect } from '../support/test-database.js';

/**
 * Linked services in archives (issue 34; DECISIONS.md "Linked services": "a member's export
 * names the link, not its tokens"). A link travels with what names it, never its sign-in (the
 * sealed device code and tokens are no columns of the archive); it arrives failed, to be linked
 * again; its card pairings travel, its jobs (history) do not.
 */
const SOURCE = testDialect();
const TARGET: TestDialect = SOURCE === 'postgres' ? 'sqlite' : process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';
const MOVED = 'moved to another instance: link it again';
const AT = '2026-03-01T10:00:00.000Z';

let source: TestApp;
let ann: string;
let bob: string;
let carol: string;
let annCard: string;
let familyId: string;
/** Every secret of the links made: the plain texts and the sealed ones. */
const secrets: string[] = [];

async function withStore<T>(t: TestApp, use: (store: ReturnType<typeof openStore>) => Promise<T>): Promise<T> {
  const store = openStore(t.config.database);
  try {
    return await use(store);
  } finally {
    await store.db.destroy();
  }
}

function importInto(t: TestApp, archive: Buffer): Promise<ImportReport> {
  return withStore(t, (store) =>
    createTransferService(store, openMediaStore(t.config.media)).importArchive(() => Readable.from([archive]), {
      skipConflicts: false,
      maxMediaBytes: Math.max(t.config.media.maxAudioBytes, t.config.media.maxImageBytes),
    }),
  );
}

async function exportOf(t: TestApp, query = ''): Promise<Buffer> {
  const r = await t.app.inject({ method: 'GET', url: `/admin/export${query}`, headers: { authorization: `Bearer ${await adminToken(t)}` } });
  expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
  return r.rawPayload;
}

/** A linked link of `userId`, its device code and tokens sealed as the links module seals them. */
function linkedRow(linkId: string, userId: string, audience: string | null): Row<'links'> {
  const box = createSecretBox('a-secret-of-the-old-instance');
  const plain = { device: `device-code-${linkId}-0123456789`, refresh: `refresh-token-${linkId}-abcdef`, access: `access-token-${linkId}-ghijkl` };
  const sealed = { device: box.seal(plain.device, linkId), refresh: box.seal(plain.refresh, linkId), access: box.seal(plain.access, linkId) };
  secrets.push(...Object.values(plain), ...Object.values(sealed));
  return linkRow({
    link_id: linkId,
    user_id: userId,
    name: `Remote of ${linkId}`,
    api_base_url: 'https://api.remote.example',
    auth_base_url: 'https://login.remote.example',
    client_id: 'client-of-the-remote',
    audience,
    state: 'linked',
    user_code: `CODE-${linkId.slice(-4).toUpperCase()}`,
    verification_uri: 'https://login.remote.example/activate',
    verification_uri_complete: `https://login.remote.example/activate?user_code=${linkId}`,
    expires_at: AT,
    device_code_sealed: sealed.device,
    poll_interval: 7,
    next_poll_at: AT,
    refresh_token_sealed: sealed.refresh,
    access_token_sealed: sealed.access,
    access_expires_at: '2999-01-01T00:00:00.000Z',
    created_at: AT,
    updated_at: '2026-03-02T10:00:00.000Z',
  });
}

const LINK_COLUMNS = ['link_id', 'user_id', 'name', 'api_base_url', 'auth_base_url', 'client_id', 'audience', 'created_at'];

beforeAll(async () => {
  source = await startTestApp({}, { dialect: SOURCE });
  [ann, bob, carol] = [newUser('lx-ann'), newUser('lx-bob'), newUser('lx-carol')];
  familyId = await familyOf(source, [ann, bob]);
  await familyOf(source, [carol]);
  annCard = expectStatus(await source.call('POST', '/content', { token: await source.token(ann), body: cardBody('Pulled once') }), 201).body.card.cardId as string;
  await withStore(source, async (store) => {
    await store.db.insertInto('links').values([linkedRow('link-ann', ann, 'https://api.remote.example'), linkedRow('link-carol', carol, null)]).execute();
    await store.db
      .insertInto('link_cards')
      .values(linkCardRow({ link_id: 'link-ann', remote_card_id: 'remote-1', local_card_id: annCard, remote_fingerprint: 'f'.repeat(64), local_version: 3, updated_at: AT }))
      .execute();
    // A finished job: history, which stays behind (a queued one would be taken by the runner).
    await store.db
      .insertInto('link_jobs')
      .values(linkJobRow({ job_id: 'job-ann-1', link_id: 'link-ann', user_id: ann, kind: 'pull', state: 'done', files_done: 2, files_total: 2, bytes: 1234, attempts: 1, created_at: AT, updated_at: AT }))
      .execute();
  });
}, 60_000);
afterAll(async () => {
  await source?.close();
});

describe(`links move with an instance (${SOURCE} to ${TARGET})`, { timeout: 120_000 }, () => {
  let archive: Buffer;

  it('the archive names each link and its card pairings, never its sign-in: no sealed column, no token in any byte, no jobs', async () => {
    archive = await exportOf(source);
    const entries = await unpack(archive);
    expect((JSON.parse(entries[0]!.data.toString()) as { version: number }).version).toBe(ARCHIVE_VERSION);
    const links = rowsOf(entries, 'links');
    expect(links.map((l) => l.link_id)).toEqual(['link-ann', 'link-carol']);
    for (const link of links) expect(Object.keys(link)).toEqual(LINK_COLUMNS);
    expect(links[0]).toEqual({
      link_id: 'link-ann',
      user_id: ann,
      name: 'Remote of link-ann',
      api_base_url: 'https://api.remote.example',
      auth_base_url: 'https://login.remote.example',
      client_id: 'client-of-the-remote',
      audience: 'https://api.remote.example',
      created_at: AT,
    });
    expect(rowsOf(entries, 'link_cards')).toEqual([
      { link_id: 'link-ann', remote_card_id: 'remote-1', local_card_id: annCard, remote_fingerprint: 'f'.repeat(64), updated_at: AT },
    ]);
    expect(entries.filter((e) => e.name.includes('link_jobs'))).toEqual([]);
    // The whole archive, unzipped: neither a token, nor the device code, plain or sealed.
    const bytes = gunzipSync(archive).toString('latin1');
    expect(secrets).toHaveLength(12);
    for (const secret of secrets) expect(bytes.includes(secret), secret).toBe(false);
    expect(bytes.includes('CODE-')).toBe(false);
  });

  it('imported, a link is failed ("link it again"), sealed nothing; its pairings are there, its jobs are not; exported again, the same bytes', async () => {
    const target = await startTestApp({}, { dialect: TARGET });
    try {
      const report = await importInto(target, archive);
      expect(report.rows).toMatchObject({ links: 2, link_cards: 1 });
      const token = await target.token(ann);
      const sourceToken = await source.token(ann);
      const [before, after] = [
        expectStatus(await source.call('GET', '/user/links', { token: sourceToken }), 200).body.links,
        expectStatus(await target.call('GET', '/user/links', { token }), 200).body.links,
      ];
      expect(before).toHaveLength(1);
      expect(before[0]).toMatchObject({ linkId: 'link-ann', state: 'linked' });
      expect(after).toEqual([{ ...before[0], state: 'failed', reason: MOVED, updatedAt: after[0].updatedAt }]);
      expect(expectStatus(await target.call('GET', '/user/links/link-ann', { token }), 200).body.link).toEqual(after[0]);
      // Nothing to sign in with: a pull asks for the link again, and nothing is queued.
      const pull = await target.call('POST', '/user/links/link-ann/pull', { token, body: {} });
      expect(pull.status).toBe(400);
      expect(pull.body.error.message).toMatch(/not signed in \(failed\): link it again/);
      expectStatus(await source.call('GET', '/user/links/link-ann/jobs/job-ann-1', { token: sourceToken }), 200);
      expect((await target.call('GET', '/user/links/link-ann/jobs/job-ann-1', { token })).status).toBe(404);
      expect(expectStatus(await target.call('GET', '/user/links/link-ann/jobs', { token }), 200).body.jobs).toEqual([]);

      await withStore(target, async (store) => {
        const rows = await store.db.selectFrom('links').selectAll().orderBy('link_id').execute();
        for (const row of rows) {
          expect(row).toMatchObject({
            state: 'failed',
            reason: MOVED,
            user_code: null,
            verification_uri: null,
            verification_uri_complete: null,
            expires_at: null,
            device_code_sealed: null,
            next_poll_at: null,
            refresh_token_sealed: null,
            access_token_sealed: null,
            access_expires_at: null,
            created_at: AT,
          });
        }
        // The local card's version does not travel: the pairing's local side is unknown.
        const pairs = await store.db.selectFrom('link_cards').selectAll().execute();
        expect(pairs).toEqual([{ link_id: 'link-ann', remote_card_id: 'remote-1', local_card_id: annCard, remote_fingerprint: 'f'.repeat(64), local_version: 0, updated_at: AT }]);
        expect(await store.db.selectFrom('link_jobs').selectAll().execute()).toEqual([]);
      });
      expect((await exportOf(target)).equals(archive)).toBe(true);
    } finally {
      await target.close();
    }
  });

  it('an archive of format version 2 (no link tables) still imports', async () => {
    let entries = await unpack(archive);
    for (const table of ['links', 'link_cards']) entries = await editTable(entries, table, () => []);
    const v2 = entries.map((e) =>
      e.name === 'cardshelf-archive.json' || e.name === 'manifest.json' ? { ...e, data: Buffer.from(e.data.toString().replace(`"version":${ARCHIVE_VERSION}`, '"version":2')) } : e,
    );
    expect(v2.filter((e) => e.name.includes('link'))).toEqual([]);
    const target = await startTestApp({}, { dialect: TARGET });
    try {
      const report = await importInto(target, await repack(v2, { fixManifest: true }));
      expect(report.rows.cards).toBe(1);
      expect(report.rows.links ?? 0).toBe(0);
      expect(expectStatus(await target.call('GET', '/user/links', { token: await target.token(ann) }), 200).body.links).toEqual([]);
    } finally {
      await target.close();
    }
  });

  it('a pairing naming a link neither in the archive nor here is refused before anything is written', async () => {
    const entries = await editTable(await unpack(archive), 'link_cards', (rows) => [...rows, { ...rows[0]!, link_id: 'no-such-link' }]);
    const target = await startTestApp({}, { dialect: TARGET });
    try {
      const err = await importInto(target, await repack(entries, { fixManifest: true })).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ArchiveRefused);
      expect((err as Error).message).toMatch(/^dangling reference: link_cards\.link_id names link no-such-link, which is neither in the archive nor here/);
      await withStore(target, async (store) => expect(await store.db.selectFrom('cards').selectAll().execute()).toEqual([]));
    } finally {
      await target.close();
    }
  });
});

describe(`a family's archive carries its members' links (${TARGET})`, { timeout: 120_000 }, () => {
  it("the operator's: its members' links and pairings, nobody else's; a member's download: their own links only", async () => {
    const family = await unpack(await exportOf(source, `?familyId=${familyId}`));
    expect(rowsOf(family, 'links').map((l) => l.link_id)).toEqual(['link-ann']);
    expect(rowsOf(family, 'link_cards').map((p) => p.remote_card_id)).toEqual(['remote-1']);

    const download = async (user: string): Promise<Entry[]> => {
      const r = await source.app.inject({ method: 'GET', url: '/user/family/export', headers: { authorization: `Bearer ${await source.token(user)}` } });
      expect(r.statusCode).toBe(200);
      return unpack(r.rawPayload);
    };
    const bobs = await download(bob);
    expect(rowsOf(bobs, 'links')).toEqual([]);
    expect(rowsOf(bobs, 'link_cards')).toEqual([]);
    const anns = await download(ann);
    expect(rowsOf(anns, 'links').map((l) => l.link_id)).toEqual(['link-ann']);
    expect(rowsOf(anns, 'link_cards')).toHaveLength(1);
    const bytes = Buffer.concat(anns.map((e) => e.data)).toString('latin1');
    for (const secret of secrets) expect(bytes.includes(secret), secret).toBe(false);

    const target = await startTestApp({}, { dialect: TARGET });
    try {
      await importInto(target, await exportOf(source, `?familyId=${familyId}`));
      const links = expectStatus(await target.call('GET', '/user/links', { token: await target.token(ann) }), 200).body.links;
      expect(links).toMatchObject([{ linkId: 'link-ann', state: 'failed', reason: MOVED }]);
    } finally {
      await target.close();
    }
  });

  it('refuses a link of a non-member, and pairings of a link that is not the archive\'s', async () => {
    const base = await unpack(await exportOf(source, `?familyId=${familyId}`));
    const archive = `the family archive of ${familyId}`;
    const link = rowsOf(base, 'links')[0]!;
    const cases: [Entry[], RegExp][] = [
      [await editTable(base, 'links', (rows) => [...rows, { ...link, link_id: 'link-planted', user_id: carol }]), new RegExp(`^${archive} holds links of ${escape(carol)}, who is not one of its members`)],
      [await editTable(base, 'links', () => []), new RegExp(`^${archive} holds link_cards of link link-ann, which is not one of its links`)],
    ];
    const target = await startTestApp({}, { dialect: TARGET });
    try {
      // The source's whole instance is there: link-ann is a link of the target, yet not the archive's.
      await importInto(target, await exportOf(source));
      const before = await exportOf(target);
      for (const [hostile, message] of cases) {
        const err = await importInto(target, await repack(hostile, { fixManifest: true })).then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(ArchiveRefused);
        expect((err as Error).message).toMatch(message);
        expect((await exportOf(target)).equals(before)).toBe(true);
      }
    } finally {
      await target.close();
    }
  });
});

const escape = (text: string): string => text.replace(/[|\\{}()[\]^$+*?.]/g, '\\$&');
