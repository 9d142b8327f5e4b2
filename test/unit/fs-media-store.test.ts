import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFsMediaStore } from '../../src/media-store/fs-media-store.js';
import { ObjectTooLarge, type MediaStore } from '../../src/media-store/media-store.js';

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
let dir: string;
let store: MediaStore;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-store-'));
  store = createFsMediaStore(dir);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const staging = async () => readdir(path.join(dir, 'staging')).catch(() => []);

describe('the file-system media store', () => {
  it('stages bytes with their SHA-256 and size, and stores them under the hash on commit', async () => {
    const staged = await store.stage(Readable.from(['hello ', 'world']), 100);
    expect(staged.sha256).toBe(hex('hello world'));
    expect(staged.size).toBe(11);
    expect(await store.stat(staged.sha256)).toBeUndefined();
    await staged.commit();
    expect(await store.stat(staged.sha256)).toEqual({ size: 11 });
    expect(await text(store.read(staged.sha256))).toBe('hello world');
    expect(await text(store.read(staged.sha256, { start: 6, end: 10 }))).toBe('world');
    expect(await staging()).toEqual([]);
  });

  it('keeps one copy of bytes committed twice', async () => {
    for (let i = 0; i < 2; i++) await (await store.stage(Readable.from(['same']), 100)).commit();
    const objects = await readdir(path.join(dir, 'objects', hex('same').slice(0, 2)));
    expect(objects).toEqual([hex('same')]);
  });

  it('refuses more than the limit and keeps nothing', async () => {
    await expect(store.stage(Readable.from(['x'.repeat(60), 'y'.repeat(60)]), 100)).rejects.toBeInstanceOf(ObjectTooLarge);
    expect(await staging()).toEqual([]);
  });

  it('keeps nothing of a body that breaks off', async () => {
    const broken = new Readable({
      read() {
        this.push('part');
        this.destroy(new Error('connection reset'));
      },
    });
    await expect(store.stage(broken, 100)).rejects.toThrow('connection reset');
    expect(await staging()).toEqual([]);
  });

  it('drops discarded bytes', async () => {
    const staged = await store.stage(Readable.from(['gone']), 100);
    await staged.discard();
    expect(await staging()).toEqual([]);
    expect(await store.stat(staged.sha256)).toBeUndefined();
  });

  it('refuses names that are not SHA-256 digests', async () => {
    await expect(store.stat('../../etc/passwd')).rejects.toThrow(/not a SHA-256/);
  });
});
