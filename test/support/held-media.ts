import sharp from 'sharp';
import { expect } from 'vitest';
import type { TestApp } from './test-app.js';

let drawn = 0;

/** A small PNG no other call of this function draws: every one is a new stored object. */
export async function uniquePng(): Promise<Buffer> {
  drawn += 1;
  const background = { r: drawn % 256, g: Math.floor(drawn / 256) % 256, b: (process.pid + drawn * 7) % 256, alpha: 1 };
  return sharp({ create: { width: 4 + (drawn % 13), height: 4, channels: 4, background } }).png().toBuffer();
}

/**
 * Uploads a new family image as `userId`: media that user's family holds (and nobody else), so
 * that references to it are ones the family may read. Its id, the SHA-256 of its bytes.
 */
export async function holdFamilyImage(t: TestApp, userId: string): Promise<string> {
  const token = await t.token(userId, 'family:library:manage');
  const r = await t.call('POST', '/media/family/images', { token, rawBody: await uniquePng(), headers: { 'content-type': 'image/png' } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.imageId as string;
}
