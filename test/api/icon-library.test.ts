import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';
import { local, sha256, startMediaStore } from '../support/media.js';
import { openStore } from '../../src/db/store.js';
import { seedPublicIcons } from '../../src/modules/media/demo-icons.js';

/**
 * The public icon library (Pixelarticons, seeded by `cardshelf seed --demo`) and the titles of
 * one's own icons, read back as the app reads them: `GET /media/displayIcons/user/yoto` and
 * `.../user/me`.
 */
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

const CONTENT = 'user:content:manage';
const png = (color: string) => sharp({ create: { width: 40, height: 40, channels: 4, background: color } }).png().toBuffer();

async function publicIcons(): Promise<any[]> {
  const token = await t.token(newUser('reader'), '');
  return expectStatus(await t.call('GET', '/media/displayIcons/user/yoto', { token }), 200).body.displayIcons;
}

describe('the public icon library', () => {
  it('holds a few hundred titled, tagged 16x16 PNG icons, the same after seeding twice', async () => {
    const store = openStore(t.config.database);
    try {
      await seedPublicIcons(store, t.config);
      const once = await publicIcons();
      await seedPublicIcons(store, t.config);
      const twice = await publicIcons();
      expect(once.length).toBeGreaterThanOrEqual(300);
      expect(twice.map((i) => [i.displayIconId, i.title, i.publicTags])).toEqual(once.map((i) => [i.displayIconId, i.title, i.publicTags]));
    } finally {
      await store.db.destroy();
    }
    const icons = await publicIcons();
    expect(icons.every((i) => i.public && i.userId === 'yoto' && i.title !== '')).toBe(true);
    const titles = icons.map((i) => i.title);
    expect(new Set(titles).size).toBe(titles.length);
    // Titles and tags from the set's names ("alarm-clock").
    const music = icons.find((i) => i.title === 'Music');
    expect(music.publicTags).toEqual(['music']);
    expect(icons.find((i) => i.title === 'Alarm clock').publicTags).toEqual(['alarm', 'clock']);
    const served = await t.call('GET', local(music.url));
    expect(served.headers['content-type']).toBe('image/png');
    expect(sha256(served.raw.rawPayload)).toBe(music.mediaId);
    const meta = await sharp(served.raw.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['png', 16, 16, true]);
    // Drawn, not blank: some pixels are set and some are clear.
    const { data } = await sharp(served.raw.rawPayload).raw().toBuffer({ resolveWithObject: true });
    const alphas = [...data.filter((_, i) => i % 4 === 3)];
    expect(alphas.some((a) => a === 0) && alphas.some((a) => a === 255)).toBe(true);
  }, 120_000);
});

describe("one's own icons' titles", () => {
  it.each([
    ['leaf.png', 'leaf'],
    ['Rocket ship.final.jpeg', 'Rocket ship.final'],
    ['photos/2024/Grandma.png', 'Grandma'],
    ['C:\\Users\\me\\Owl.gif', 'Owl'],
    ['  Bear  .png', 'Bear'],
    ['x'.repeat(300) + '.png', 'x'.repeat(200)],
  ])('titles an icon uploaded as %j "%s"', async (filename, title) => {
    const token = await t.token(newUser('titled'), CONTENT);
    const upload = await t.call('POST', `/media/displayIcons/user/me/upload?filename=${encodeURIComponent(filename)}`, {
      token,
      rawBody: await png('#0a0'),
      headers: { 'content-type': 'image/png' },
    });
    expect(expectStatus(upload, 200).body.displayIcon.title).toBe(title);
    const mine = expectStatus(await t.call('GET', '/media/displayIcons/user/me', { token: await t.token(upload.body.displayIcon.userId, 'user:content:view') }), 200);
    expect(mine.body.displayIcons.map((i: any) => i.title)).toEqual([title]);
  });

  it.each([[''], ['.png'], ['   ']])('leaves an icon uploaded as %j untitled', async (filename) => {
    const token = await t.token(newUser('untitled'), CONTENT);
    const icon = expectStatus(
      await t.call('POST', `/media/displayIcons/user/me/upload?filename=${encodeURIComponent(filename)}`, { token, rawBody: await png('#00a'), headers: { 'content-type': 'image/png' } }),
      200,
    ).body.displayIcon;
    expect(icon).not.toHaveProperty('title');
  });

  it('retitles an icon sent again under another name, and keeps its title when sent without one', async () => {
    const user = newUser('retitle');
    const token = await t.token(user, CONTENT);
    const bytes = await png('#a0a');
    const send = (query: string) => t.call('POST', `/media/displayIcons/user/me/upload${query}`, { token, rawBody: bytes, headers: { 'content-type': 'image/png' } });
    const first = expectStatus(await send('?filename=owl.png'), 200).body.displayIcon;
    const renamed = expectStatus(await send('?filename=Night%20owl.png'), 200).body.displayIcon;
    expect([renamed.displayIconId, renamed.title, renamed.new]).toEqual([first.displayIconId, 'Night owl', undefined]);
    expect(expectStatus(await send(''), 200).body.displayIcon.title).toBe('Night owl');
    const mine = expectStatus(await t.call('GET', '/media/displayIcons/user/me', { token: await t.token(user, 'user:content:view') }), 200);
    expect(mine.body.displayIcons.map((i: any) => i.title)).toEqual(['Night owl']);
  });
});
