import type { Config } from '../../config.js';
import type { Store } from '../../db/dialect.js';
import { openMediaStore } from '../../media-store/open-media-store.js';
import { ICON_LIBRARY, libraryIcons } from './icon-library.js';
import { instanceSecret } from '../../auth/media-url-secret.js';
import { createMediaUrlSigner } from './media-urls.js';
import { createImages } from './images.js';
import { createMediaObjects } from './objects.js';

/**
 * Loads the public icon library (icon-library.ts) as an operator would through the admin API:
 * each icon by its image, so running it again retitles nothing and adds nothing. Answers a line
 * for the seed's log.
 */
export async function seedPublicIcons(store: Store, config: Readonly<Config>): Promise<string> {
  const mediaStore = openMediaStore(config.media);
  const images = createImages({
    store,
    mediaStore,
    objects: createMediaObjects(store, mediaStore, config.media.quotaBytes),
    signer: createMediaUrlSigner(config.mediaUrlTemplate, await instanceSecret(config.mediaUrlSecret, config.auth, config.dataDir)),
    publicBaseUrl: config.publicBaseUrl,
  });
  let count = 0;
  for await (const icon of libraryIcons()) {
    await images.putPublicIcon(icon.png, { title: icon.title, tags: icon.tags });
    count++;
  }
  return `${count} from ${ICON_LIBRARY.name} (${ICON_LIBRARY.licence}, ${ICON_LIBRARY.author})`;
}
