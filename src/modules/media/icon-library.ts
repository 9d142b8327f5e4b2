import { createHash } from 'node:crypto';
import { icons, info } from '@iconify-json/pixelarticons';
import { imageWork, sharp } from './image-work.js';

/**
 * The public icon library: Pixelarticons (MIT, Gerrit Halfmann; docs/api.md "Public icon library"
 * says why this set), read from its Iconify JSON package at seed time only. Its icons are drawn
 * on a 24-pixel grid; each is drawn at that size (one SVG unit a pixel, so edges stay crisp),
 * cropped to what it draws, and fitted into the players' 16x16.
 */

/** The set's name and licence, as its own package states them (NOTICE repeats them). */
export const ICON_LIBRARY = { name: info.name, licence: info.license.spdx ?? info.license.title, author: info.author.name };

/** One colour for the set's one-colour shapes: readable on a player's dark screen and on the app's light and dark pages. */
const FILL = '#3d8fd6';
const GRID = 24;
const SIZE = 16;

/** Style variants (heart-solid, heart-sharp) repeat their base icon: the library keeps the base. */
const VARIANT = /-(solid|sharp)$/;

/** Companies' and projects' logos: trademarks, not pictures for a family's cards. */
const LOGOS = new Set(
  'android apple bitcoin bluesky deno discord docker facebook figma github gitlab gmail google instagram linkedin linux mastodon netlify npm pixelarticons pnpm react slack telegram tiktok twitter-bird vercel whatsapp youtube'.split(' '),
);

export interface LibraryIcon {
  title: string;
  tags: string[];
  png: Buffer;
}

/** "arrow-big-up" -> "Arrow big up": the set names its icons, it does not title them. */
function titleOf(name: string): string {
  const words = name.split('-').join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The words of the name, so that search and suggestions find "music-note" by "music" and "note". */
function tagsOf(name: string): string[] {
  return [...new Set(name.split('-').filter((w) => /[a-z]/.test(w)))];
}

/** The icon's 16x16 RGBA PNG: drawn at its grid size, cropped, then fitted, never enlarged. */
async function pixels(body: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${GRID}" height="${GRID}" viewBox="0 0 ${GRID} ${GRID}">${body.replaceAll('currentColor', FILL)}</svg>`;
  return imageWork(async () => {
    const drawn = await sharp(Buffer.from(svg)).ensureAlpha().raw().toBuffer();
    const box = drawnBox(drawn);
    const raw = { raw: { width: GRID, height: GRID, channels: 4 as const } };
    let image = sharp(drawn, raw).extract(box);
    // What fits in 16x16 keeps its pixels as drawn; larger ones are scaled down to fit.
    let { width, height } = box;
    if (width > SIZE || height > SIZE) {
      const scale = SIZE / Math.max(width, height);
      [width, height] = [Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale))];
      image = sharp(await image.resize(width, height, { fit: 'fill' }).raw().toBuffer(), { raw: { width, height, channels: 4 } });
    }
    const left = Math.floor((SIZE - width) / 2);
    const top = Math.floor((SIZE - height) / 2);
    return image
      .extend({ left, top, right: SIZE - width - left, bottom: SIZE - height - top, background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .png()
      .toBuffer();
  });
}

/** The smallest box holding every pixel the icon draws (an icon that draws nothing keeps the whole grid). */
function drawnBox(rgba: Buffer): { left: number; top: number; width: number; height: number } {
  let [minX, minY, maxX, maxY] = [GRID, GRID, -1, -1];
  for (let y = 0; y < GRID; y++) {
    for (let x = 0; x < GRID; x++) {
      if (rgba[(y * GRID + x) * 4 + 3] === 0) continue;
      [minX, minY, maxX, maxY] = [Math.min(minX, x), Math.min(minY, y), Math.max(maxX, x), Math.max(maxY, y)];
    }
  }
  return maxX < 0 ? { left: 0, top: 0, width: GRID, height: GRID } : { left: minX, top: minY, width: maxX - minX + 1, height: maxY - minY + 1 };
}

/**
 * The names of the library's icons, in the set's order: of each family of names (calendar,
 * calendar-plus, calendar-2, ...) the shortest, so that a few hundred distinct pictures remain
 * rather than a thousand interface controls; variants and logos left out.
 */
export function libraryIconNames(): string[] {
  const families = new Map<string, string>();
  for (const name of Object.keys(icons.icons)) {
    if (VARIANT.test(name) || LOGOS.has(name)) continue;
    const family = name.split('-')[0]!;
    const kept = families.get(family);
    if (kept === undefined || name.length < kept.length) families.set(family, name);
  }
  return [...families.values()];
}

/**
 * Each library icon, made when asked for (a few hundred: made one at a time, not all held at
 * once). Two names the same picture at 16x16 (open and external-link) would be one icon,
 * retitled by the second: the first name keeps it.
 */
export async function* libraryIcons(): AsyncGenerator<LibraryIcon> {
  const made = new Set<string>();
  for (const name of libraryIconNames()) {
    const png = await pixels(icons.icons[name]!.body);
    const hash = createHash('sha256').update(png).digest('hex');
    if (made.has(hash)) continue;
    made.add(hash);
    yield { title: titleOf(name), tags: tagsOf(name), png };
  }
}
