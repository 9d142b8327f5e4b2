import { imageWork, sharp } from './image-work.js';
import type { Config } from '../../config.js';
import type { Store } from '../../db/dialect.js';
import { openMediaStore } from '../../media-store/open-media-store.js';
import { createMediaUrlSigner } from './media-urls.js';
import { createImages } from './images.js';
import { createMediaObjects } from './objects.js';

/** A few public icons for the demo, drawn as SVG: title, tags, shape. */
const ICONS: [string, string[], string][] = [
  ['Sun', ['weather', 'yellow'], '<circle cx="8" cy="8" r="6" fill="#fc0"/>'],
  ['Moon', ['night', 'bedtime'], '<circle cx="8" cy="8" r="6" fill="#ddd"/><circle cx="11" cy="6" r="5" fill="#000"/>'],
  ['Heart', ['love', 'red'], '<path d="M8 14 L2 7 A3 3 0 0 1 8 4 A3 3 0 0 1 14 7 Z" fill="#e22"/>'],
  ['Tree', ['nature', 'green'], '<path d="M8 1 L14 12 H2 Z" fill="#2a2"/><rect x="7" y="12" width="2" height="3" fill="#840"/>'],
];

/** Loads the demo's public icons (as an operator would through the admin API); idempotent. */
export async function seedPublicIcons(store: Store, config: Readonly<Config>): Promise<string[]> {
  const mediaStore = openMediaStore(config.media);
  const images = createImages({
    store,
    mediaStore,
    objects: createMediaObjects(store, mediaStore, config.media.quotaBytes),
    signer: createMediaUrlSigner(config.mediaUrlTemplate, config.mediaUrlSecret),
    publicBaseUrl: config.publicBaseUrl,
  });
  const titles: string[] = [];
  for (const [title, tags, shape] of ICONS) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16">${shape}</svg>`;
    const png = await imageWork(() => sharp(Buffer.from(svg)).png().toBuffer());
    await images.putPublicIcon(png, { title, tags });
    titles.push(title);
  }
  return titles;
}
