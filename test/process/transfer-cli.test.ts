import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { cli, http, startServer } from '../support/processes.js';
import { addMedia, archiveRow, bomb, editTable, repack, rowsOf, unpack, type Entry } from '../support/archives.js';
import { loadConfig } from '../../src/config.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openMediaStore } from '../../src/media-store/open-media-store.js';
import { ARCHIVE_VERSION } from '../../src/transfer/archive-format.js';
import { createTransferService } from '../../src/transfer/service.js';
import { makeAudio } from '../support/media.js';
import { testDialect } from '../support/test-database.js';

describe(`cardshelf export and import on ${testDialect()}`, { timeout: 240_000 }, () => {
  let dir: string;
  let from: Deployment;
  let to: Deployment;
  let token: string;
  const file = (name: string): string => path.join(dir, name);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-transfer-'));
    [from, to] = await Promise.all([createDeployment(), createDeployment()]);
    const seeded = await cli(['seed', '--demo'], from.env);
    expect(seeded.code, seeded.stderr).toBe(0);
    token = seeded.stdout.trim();
  });
  afterAll(async () => {
    await from?.close();
    await to?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * A deployment's own export, to compare before and after a refused import: made in this
   * process by the exporter the command runs, as the command would (migrated first), without a
   * process of its own. The commands' exports are tested as such below.
   */
  async function snapshotOf(d: Deployment, name: string): Promise<Buffer> {
    const store = d.store();
    await migrateToLatest(store);
    await pipeline(createTransferService(store, openMediaStore(loadConfig(d.env).media)).instanceArchive(), createWriteStream(file(name)));
    return readFile(file(name));
  }
  const snapshot = (name: string): Promise<Buffer> => snapshotOf(to, name);

  it('checks its options before anything runs (exit 2, no file written)', async () => {
    const cases: [string[], RegExp][] = [
      [['export', '--family', 'not an id!'], /--family <id>.*is invalid/],
      [['export', '--family', 'nobody-here', '--out', file('none.tar.gz')], /there is no family nobody-here/],
      [['export', '--force'], /unknown option '--force'/],
      [['import'], /missing required argument 'file'/],
      [['import', file('missing.tar.gz')], /is not a file/],
      [['import', file('x'), file('y')], /too many arguments/],
    ];
    // Each refused before it touches anything: side by side, as test/cli.test.ts runs its own.
    const results = await Promise.all(cases.map(([args]) => cli(args, from.env)));
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, `cardshelf ${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(await readdir(dir)).toEqual([]);
    const helps = await Promise.all(['export', 'import'].map(async (command) => ({ command, r: await cli([command, '--help'], from.env) })));
    for (const { command, r } of helps) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: cardshelf ${command}`);
    }
  });

  it('export, import into an empty store, export again: the same bytes; the old tokens work with the key carried over', async () => {
    const exported = await cli(['export', '--out', file('a.tar.gz')], from.env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toBe('');
    const imported = await cli(['import', file('a.tar.gz')], to.env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toMatch(/^import: \d+ rows written in [\d.]+ s \(media_objects (\d+), cards 5, .*\), \1 media objects, 0 rows left out\n$/);
    const again = await cli(['export', '--out', file('b.tar.gz')], to.env);
    expect(again.code, again.stderr).toBe(0);
    expect((await readFile(file('b.tar.gz'))).equals(await readFile(file('a.tar.gz')))).toBe(true);

    // The same instance on the new store: the key file of the old one, its token, its answers.
    const server = await startServer({ ...to.env, SIGNING_KEY_FILE: from.env.SIGNING_KEY_FILE! });
    try {
      const mine = await http(server.url, 'GET', '/content/mine', { token });
      expect(mine.status).toBe(200);
      expect(mine.body.cards.length).toBeGreaterThan(0);
    } finally {
      await server.stop('SIGKILL', 0);
    }
  });

  it('exports one family: its members and their data only', async () => {
    const r = await cli(['export', '--family', 'demofamily', '--out', file('family.tar.gz')], from.env);
    expect(r.code, r.stderr).toBe(0);
    const entries = await unpack(await readFile(file('family.tar.gz')));
    expect(rowsOf(entries, 'families').map((f) => f.family_id)).toEqual(['demofamily']);
    expect(rowsOf(entries, 'cards').every((c) => c.origin === 'myo')).toBe(true);
    const all = await unpack(await readFile(file('a.tar.gz')));
    expect(rowsOf(entries, 'cards').length).toBeLessThan(rowsOf(all, 'cards').length);
  });

  it('refuses a damaged archive, a newer one and one whose ids are taken (exit 2), leaving the target as it was', async () => {
    const before = await snapshot('before.tar.gz');
    const archive = await readFile(file('a.tar.gz'));
    const damaged = Buffer.from(archive);
    damaged[Math.floor(damaged.length / 2)]! ^= 0x55;
    await writeFile(file('damaged.tar.gz'), damaged);
    const entries = await unpack(archive);
    await writeFile(
      file('newer.tar.gz'),
      await repack(entries.map((e) => (e.name === 'cardshelf-archive.json' ? { ...e, data: Buffer.from(e.data.toString().replace(`"version":${ARCHIVE_VERSION}`, '"version":7')) } : e))),
    );
    const cases: [string, RegExp][] = [
      ['damaged.tar.gz', /^cardshelf: import: damaged archive: .*; nothing was written\n$/],
      ['newer.tar.gz', new RegExp(`format version 7, newer than this Cardshelf reads \\(up to ${ARCHIVE_VERSION}\\): import it with a newer Cardshelf; nothing was written`)],
      ['a.tar.gz', /records of the archive conflict with data already there \(cards \(card_id\) .*\); nothing was written\. Give --skip-conflicts/],
    ];
    for (const [name, message] of cases) {
      const r = await cli(['import', file(name)], to.env);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const skipped = await cli(['import', '--skip-conflicts', file('a.tar.gz')], to.env);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stderr).toMatch(/^import: 0 rows written .*\(none\), \d+ media objects, \d+ rows left out\n$/);
    expect((await snapshot('after.tar.gz')).equals(before)).toBe(true);
  });

  /** The files of a deployment's media store (the file system store under DATA_DIR). */
  async function mediaFiles(d: Deployment): Promise<string[]> {
    const objects = path.join(d.env.DATA_DIR!, 'media', 'objects');
    const names = await readdir(objects, { recursive: true }).catch(() => [] as string[]);
    return names.sort();
  }

  it('refuses hostile archives (exit 2) in the first pass: nothing written, media included', async () => {
    // An empty target: the archive's media are not there, so a media file written shows.
    const empty = await createDeployment();
    try {
      await refusesHostile(empty);
    } finally {
      await empty.close();
    }
  });

  async function refusesHostile(target: Deployment): Promise<void> {
    const before = await snapshotOf(target, 'hostile-before.tar.gz');
    expect(await mediaFiles(target)).toEqual([]);
    const all = await unpack(await readFile(file('a.tar.gz')));
    const family = await unpack(await readFile(file('family.tar.gz')));
    const cards = all.find((e) => e.name.startsWith('tables/02-cards/'))!;
    const twice = all.map((e) => (e === cards ? { ...e, data: Buffer.concat([e.data.subarray(0, e.data.indexOf(10) + 1), e.data]) } : e));
    const familyId = String(rowsOf(family, 'families')[0]!.family_id);
    const catalogueCard = rowsOf(all, 'cards').find((c) => c.origin === 'catalogue')!;
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082', 'hex');
    const cases: [string, () => Promise<Buffer>, RegExp][] = [
      // Issue 17, row 9: a manifest that unpacks to 1.5 GB, in an archive of a few MB.
      ['bomb.tar.gz', () => bomb(all.filter((e) => e.name !== 'manifest.json'), 'manifest.json', 1536 * 1024 * 1024), /damaged archive: manifest\.json is 1610612736 bytes, more than it can be \(\d+\)/],
      // Row 10: a key twice in the archive, a reference to a family that is nowhere.
      ['twice.tar.gz', async () => repack(twice, { fixManifest: true }), /duplicate key in the archive: cards \(card_id\) \S+ is there twice \(tables\/02-cards\/000001\.ndjson, line \d+\)/],
      [
        'dangling.tar.gz',
        async () => repack(await editTable(all, 'family_devices', (rows) => [...rows, { device_id: 'zz-player', family_id: 'nowhere', added_at: '2026-01-01T00:00:00.000Z', position: 0, name: null, device_type: null, config: null, shortcuts: null, registered_by: null }])),
        /dangling reference: family_devices\.family_id names family nowhere, which is neither in the archive nor here \(tables\/05-family_devices\/000001\.ndjson, line \d+\)/,
      ],
      // Row 2: a family's archive with a free catalogue card, with media its rows do not name.
      [
        'catalogue.tar.gz',
        async () => repack(await editTable(family, 'cards', (rows) => [...rows, { ...catalogueCard, card_id: 'zzzzz', is_free: 1 }])),
        new RegExp(`the family archive of ${familyId} holds catalogue card zzzzz: a family's archive holds its members' own cards only \\(tables\\/02-cards\\/000001\\.ndjson, line \\d+\\)`),
      ],
      [
        'unnamed.tar.gz',
        async () => repack((await addMedia(family, png, 'image/png')).entries),
        new RegExp(`the family archive of ${familyId} carries media object [0-9a-f]{64}, which none of its rows names`),
      ],
    ];
    for (const [name, make, message] of cases) {
      await writeFile(file(name), await make());
      const r = await cli(['import', file(name)], target.env);
      expect.soft(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect.soft(r.stderr, name).toMatch(new RegExp(`^cardshelf: import: ${message.source}; nothing was written\n$`));
      expect.soft(await mediaFiles(target), name).toEqual([]);
    }
    expect((await stat(file('bomb.tar.gz'))).size).toBeLessThan(8 * 1024 * 1024);
    expect((await snapshotOf(target, 'hostile-after.tar.gz')).equals(before)).toBe(true);
  }

  /**
   * Issue 17, row 2: hand-made family archives that reach beyond their family, each run through
   * the real command into an instance where A (a generated user, in a family of her own) lives.
   * The archive is the demo family's, new there; each variant adds one hostile row.
   */
  it('refuses a family archive (exit 2) that reaches beyond its family; its transcodes are queued anew', async () => {
    const victim = await createDeployment();
    try {
      const seeded = await cli(['seed', '--scale', '1', '--prefix', 'victim', '--cards-per-user', '2', '--catalogue', '1'], victim.env);
      expect(seeded.code, seeded.stderr).toBe(0);
      const here = await unpack(await snapshotOf(victim, 'victim-before.tar.gz'));
      const before = await readFile(file('victim-before.tar.gz'));
      const mediaBefore = await mediaFiles(victim);
      const alice = String(rowsOf(here, 'family_memberships')[0]!.user_id);
      const aliceFamily = String(rowsOf(here, 'family_memberships')[0]!.family_id);
      expect(rowsOf(here, 'cards').some((c) => c.user_id === alice)).toBe(true);

      const family = await unpack(await readFile(file('family.tar.gz')));
      const familyId = String(rowsOf(family, 'families')[0]!.family_id);
      const member = String(rowsOf(family, 'family_memberships')[0]!.user_id);
      const archive = `the family archive of ${familyId}`;
      const at = '2026-01-01T00:00:00.000Z';
      const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082', 'hex');
      const catalogueCard = rowsOf(await unpack(await readFile(file('a.tar.gz'))), 'cards').find((c) => c.origin === 'catalogue')!;
      const myCard = rowsOf(family, 'cards')[0]!;
      /** The family archive with `bytes` carried (said to be `type`) and held by `owner` as `size` bytes. */
      const held = async (bytes: Buffer, type: string, owner: string, size = bytes.length): Promise<Entry[]> => {
        const added = await addMedia(family, bytes, type);
        return editTable(added.entries, 'media_holdings', (rows) => [...rows, { owner_id: owner, sha256: added.sha256, kind: 'cover', size, created_at: at }]);
      };
      /** The family archive with `bytes` (said to be `type`) as one of its family images. */
      const image = async (bytes: Buffer, type: string): Promise<Entry[]> => {
        const added = await addMedia(family, bytes, type);
        return editTable(added.entries, 'family_images', (rows) => [...rows, { family_id: familyId, image_id: added.sha256, size: bytes.length, created_at: at }]);
      };
      const html = Buffer.from('<!doctype html><script>alert(document.cookie)</script>');
      const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

      const membership = await editTable(family, 'family_memberships', (rows) => [...rows, { ...rows[0]!, user_id: alice }]);
      const moved = new RegExp(`${archive} would move ${escape(alice)}, a member of family ${aliceFamily} here, into ${familyId}`);
      const cases: [string, Entry[], RegExp, string[]?][] = [
        [
          'free-catalogue-card',
          await editTable(family, 'cards', (rows) => [...rows, { ...catalogueCard, card_id: 'zzfree', is_free: 1 }]),
          new RegExp(`${archive} holds catalogue card zzfree: a family's archive holds its members' own cards only`),
        ],
        ['card-of-a', await editTable(family, 'cards', (rows) => [...rows, { ...myCard, card_id: 'zzalice', user_id: alice }]), new RegExp(`${archive} holds cards of ${escape(alice)}, who is not one of its members`)],
        [
          'wishlist-of-a',
          await editTable(family, 'wishlists', (rows) => [...rows, archiveRow('wishlists', { wishlist_id: 'zz-planted', share_id: 'zz-planted-share', user_id: alice, content: '[]', created_at: at, updated_at: at })]),
          new RegExp(`${archive} holds wishlists of ${escape(alice)}, who is not one of its members`),
        ],
        ['holding-of-a', await held(png, 'image/png', alice), new RegExp(`${archive} holds media of ${escape(alice)}, who is not one of its members`)],
        ['holding-10-gib', await held(png, 'image/png', member, 10 * 1024 ** 3), new RegExp(`media_holdings says ${sha(png)} is 10737418240 bytes, its bytes are ${png.length}`)],
        // With --skip-conflicts too: moving a user is not a conflict to leave out.
        [`membership-of-a`, membership, moved],
        [`membership-of-a-skipping`, membership, moved, ['--skip-conflicts']],
        [
          'public-icons-owner',
          await editTable(family, 'family_memberships', (rows) => [...rows, { ...rows[0]!, user_id: 'yoto' }]),
          new RegExp(`${archive} makes yoto, the owner of the public icons, a member`),
        ],
        ['html-as-html', await image(html, 'text/html'), new RegExp(`media object ${sha(html)} cannot be stored: its bytes are of no type Cardshelf stores \\(it says text/html\\)`)],
        ['png-as-html', await image(png, 'text/html'), new RegExp(`media object ${sha(png)} cannot be stored: it says text/html, but its bytes are image/png`)],
        ['html-as-png', await image(html, 'image/png'), new RegExp(`media object ${sha(html)} cannot be stored: its bytes are of no type Cardshelf stores \\(it says image/png\\)`)],
      ];
      for (const [name, entries, message, flags = []] of cases) {
        await writeFile(file(`${name}.tar.gz`), await repack(entries));
        const r = await cli(['import', ...flags, file(`${name}.tar.gz`)], victim.env);
        expect.soft(r.code, `${name}: ${r.stderr}`).toBe(2);
        expect.soft(r.stderr, name).toMatch(new RegExp(`^cardshelf: import: ${message.source}.*; nothing was written\n$`));
        expect.soft(await mediaFiles(victim), name).toEqual(mediaBefore);
      }
      expect((await snapshotOf(victim, 'victim-after.tar.gz')).equals(before)).toBe(true);

      // A transcode row saying that a member's upload made the attacker's audio: imported, it
      // would answer every later upload of that source with it. It is queued anew instead.
      const source = await makeAudio(1);
      const theirs = await makeAudio(1, { hz: 880 });
      let lying = (await addMedia(family, source, 'audio/mpeg')).entries;
      lying = (await addMedia(lying, theirs, 'audio/mpeg')).entries;
      lying = await editTable(lying, 'media_holdings', (rows) => [...rows, { owner_id: member, sha256: sha(source), kind: 'audio', size: source.length, created_at: at }]);
      lying = await editTable(lying, 'audio_uploads', (rows) => [
        ...rows,
        { upload_id: 'zz-upload', user_id: member, filename: 'song.mp3', declared_sha256: null, state: 'received', source_sha256: sha(source), url_expires_at: at, created_at: at, updated_at: at },
      ]);
      lying = await editTable(lying, 'transcodes', () => [
        { source_sha256: sha(source), loudnorm: 0, status: 'done', attempts: 1, lease_until: null, progress: 100, transcoded_sha256: sha(theirs), transcoded_info: '{}', error: null, created_at: at, updated_at: at },
      ]);
      await writeFile(file('lying-transcode.tar.gz'), await repack(lying));
      const imported = await cli(['import', file('lying-transcode.tar.gz')], victim.env);
      expect(imported.code, imported.stderr).toBe(0);
      const after = await unpack(await snapshotOf(victim, 'victim-imported.tar.gz'));
      expect(rowsOf(after, 'families').map((f) => f.family_id)).toContain(familyId);
      const jobs = rowsOf(after, 'transcodes').filter((t) => t.source_sha256 === sha(source));
      expect(jobs).toMatchObject([{ status: 'queued', attempts: 0, transcoded_sha256: null }]);
    } finally {
      await victim.close();
    }
  });

  // Last: it takes a media file away from the source.
  it('stops (exit 1) when a recorded media object is missing from the store, leaving no file', async () => {
    const objects = path.join(from.env.DATA_DIR!, 'media', 'objects');
    const [prefix] = await readdir(objects);
    const [name] = await readdir(path.join(objects, prefix!));
    await rm(path.join(objects, prefix!, name!));
    const r = await cli(['export', '--out', file('broken.tar.gz')], from.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`media object ${name} is recorded in the database, but its bytes are not in the media store`);
    expect((await readdir(dir)).filter((f) => f.startsWith('broken'))).toEqual([]);
  });
});

const escape = (text: string): string => text.replace(/[|\\{}()[\]^$+*?.]/g, '\\$&');
