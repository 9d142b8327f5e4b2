import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { cardBody, startTestApp, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';
import { local, makeAudio, pollTranscode, sha256, startMediaStore, uploadAudio } from '../support/media.js';
import { createDeployment } from '../support/deployment.js';
import { runCli } from '../support/processes.js';
import { openStore } from '../../src/db/store.js';
import { openMediaStore } from '../../src/media-store/open-media-store.js';
import { collectMediaGarbage } from '../../src/modules/media/gc.js';

let t: TestApp;
let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;
beforeAll(async () => {
  mediaStore = await startMediaStore();
  t = await startTestApp(mediaStore.env);
});
afterAll(async () => {
  await t.close();
  await mediaStore.close();
});

describe('media gc', () => {
  it('removes media nothing references (after the grace period), keeps the rest, and a dry run removes nothing', async () => {
    const token = await t.token(newUser('gc'), 'user:content:manage family:library:manage');
    const used = await makeAudio(1, { hz: 880 });
    const unused = await makeAudio(1, { hz: 990 });
    const a = await uploadAudio(t, token, used);
    const usedOut = expectStatus(await pollTranscode(t, token, a.uploadId), 200).body.transcode.transcodedSha256;
    const b = await uploadAudio(t, token, unused);
    const unusedOut = expectStatus(await pollTranscode(t, token, b.uploadId), 200).body.transcode.transcodedSha256;
    const body = cardBody('kept');
    (body.content as any).chapters[0].tracks[0].trackUrl = `service:#${usedOut}`;
    expectStatus(await t.call('POST', '/content', { token, body }), 201);
    const png = (c: string) => sharp({ create: { width: 20, height: 20, channels: 4, background: c } }).png().toBuffer();
    const post = (url: string, bytes: Buffer) => t.call('POST', url, { token, rawBody: bytes, headers: { 'content-type': 'image/png' } });
    const cover = expectStatus(await post('/media/coverImage/user/me/upload', await png('#111')), 200).body.coverImage.mediaId;
    const icon = expectStatus(await post('/media/displayIcons/user/me/upload', await png('#222')), 200).body.displayIcon.mediaId;
    const image = expectStatus(await post('/media/family/images', await png('#333')), 200).body.imageId;
    // Its sized copies, made at upload, are derived objects nothing names: made again when asked for.
    const sizes: string[] = [];
    for (const size of ['width=640&height=480', 'width=320&height=320']) {
      const redirect = await t.call('GET', `/media/family/images/${image}?${size}`, { token });
      sizes.push(/\/media\/files\/([0-9a-f]{64})\?/.exec(redirect.headers.location as string)![1]!);
    }

    const store = openStore(t.config.database);
    const media = openMediaStore(t.config.media);
    try {
      const garbage = [sha256(unused), unusedOut, cover, ...sizes].sort();
      const kept = [sha256(used), usedOut, icon, image];

      const young = await collectMediaGarbage(store, media, { graceMs: 3_600_000, dryRun: false });
      expect(young.removed).toEqual([]);

      const dry = await collectMediaGarbage(store, media, { graceMs: 0, dryRun: true, nowMs: Date.now() + 1000 });
      expect(dry.removed.map((r) => r.sha256).sort()).toEqual(garbage);
      for (const h of garbage) expect(await media.stat(h)).toBeDefined();

      const real = await collectMediaGarbage(store, media, { graceMs: 0, dryRun: false, nowMs: Date.now() + 1000 });
      expect(real.removed.map((r) => r.sha256).sort()).toEqual(garbage);
      expect(real.bytes).toBeGreaterThan(0);
      for (const h of garbage) expect(await media.stat(h)).toBeUndefined();
      for (const h of kept) expect(await media.stat(h)).toBeDefined();
      const rows = await store.db.selectFrom('media_objects').select('sha256').where('sha256', 'in', garbage).execute();
      expect(rows).toEqual([]);

      // The removed upload's bytes may come again: the hash is unknown, so an upload URL is given.
      const again = await t.call('GET', `/media/transcode/audio/uploadUrl?sha256=${sha256(unused)}`, { token });
      expect(again.body.upload.uploadUrl).toEqual(expect.any(String));
      // A size removed is made again, once, on the next read.
      const remade = await t.call('GET', `/media/family/images/${image}?width=320&height=320`, { token });
      expect(remade.status).toBe(302);
      expect((await t.call('GET', local(remade.headers.location as string))).status).toBe(200);
    } finally {
      await store.db.destroy();
    }
  });

  it('runs from the command line, with a dry run, and refuses a bad grace period', async () => {
    const deployment = await createDeployment();
    try {
      const bad = await runCli(['media', 'gc', '--grace', 'soon'], { ...deployment.env, LOG_LEVEL: 'silent' }).exited;
      expect(bad.code).toBe(2);
      const cli = runCli(['media', 'gc', '--dry-run'], { ...deployment.env, LOG_LEVEL: 'silent' });
      const ran = await cli.exited;
      expect(ran.code).toBe(0);
      expect(JSON.parse(cli.stdout())).toEqual({ removed: [], bytes: 0, staging: 0, dryRun: true });
    } finally {
      await deployment.close();
    }
  });
});
