import type { Config } from '../config.js';
import { createTagger } from '../shared/entity-tag.js';
import type { Store } from '../db/dialect.js';
import { createCardService } from '../modules/cards/service.js';
import { createFamilyService } from '../modules/families/service.js';
import { createGroupService } from '../modules/groups/service.js';
import { createLibraryService } from '../modules/library/service.js';
import { listSummariesByOwner } from '../modules/cards/repository.js';
import { listGroups } from '../modules/groups/repository.js';
import type { CardInput } from '../modules/cards/schemas.js';
import { seedPublicIcons } from '../modules/media/demo-icons.js';

export const DEMO_USER = 'auth0|demo-parent';
export const DEMO_FAMILY = 'demofamily';

const track = (key: string, title: string, hash: string) => ({
  key,
  title,
  type: 'audio' as const,
  format: 'aac',
  trackUrl: `service:#${hash}`,
  display: { icon16x16: 'service:#icon-star' },
  ambient: null,
  duration: 180,
});

const chapter = (key: string, title: string, tracks: ReturnType<typeof track>[]) => ({
  key,
  title,
  overlayLabel: String(Number(key)),
  overlayLabelOverride: '',
  display: { icon16x16: 'service:#icon-moon' },
  ambient: null,
  defaultTrackAmbient: null,
  defaultTrackDisplay: null,
  tracks,
});

const catalogue = [
  {
    cardId: 'dmFr1',
    title: 'The Sleepy Owl (free)',
    availability: 'free',
    clubAvailability: [],
    metadata: { author: 'Cardshelf Demo', category: 'stories' as const, description: 'A free bedtime story.' },
  },
  {
    cardId: 'dmPr1',
    title: 'Rocket to the Moon (premium)',
    availability: 'premium',
    clubAvailability: [],
    metadata: { author: 'Cardshelf Demo', category: 'stories' as const, description: 'Premium; not in the club.' },
  },
  {
    cardId: 'dmCl1',
    title: 'Ocean Songs (club)',
    availability: 'premium',
    clubAvailability: [{ store: 'us' }, { store: 'gb' }],
    metadata: { author: 'Cardshelf Demo', category: 'music' as const, description: 'In the club subscription.' },
  },
];

const myoCards: CardInput[] = [
  {
    title: 'Grandma Reads Fairy Tales',
    metadata: { author: 'Grandma', category: 'stories', description: 'Recorded at the kitchen table.' },
    content: {
      activity: 'service_Player',
      version: '1',
      config: { autoadvance: 'repeat', onlineOnly: false },
      chapters: [
        chapter('01', 'Little Red Riding Hood', [track('01', 'Part one', 'fairy-1a'), track('02', 'Part two', 'fairy-1b')]),
        chapter('02', 'The Three Bears', [track('01', 'The whole story', 'fairy-2a')]),
      ],
    },
  },
  {
    title: 'Car Trip Songs',
    metadata: { author: 'Dad', category: 'music' },
    content: {
      activity: 'service_Player',
      version: '1',
      chapters: [chapter('01', 'Wheels on the Bus', [track('01', 'Wheels on the Bus', 'song-1')])],
    },
  },
];

/**
 * Loads a small demo: a family with two members and two players, three catalogue cards (free,
 * premium, club), MYO cards with chapters, two library records, a group and public display
 * icons. Running it again
 * leaves the data as it is.
 */
export async function seedDemo(store: Store, config: Readonly<Config>, log: (line: string) => void): Promise<void> {
  // The services' writes bump the change counters; the tags they answer with are not used here.
  const tagger = createTagger(['seed']);
  const families = createFamilyService(store, config, tagger);
  const cards = createCardService(store, families, tagger);
  const groups = createGroupService(store, families, config, tagger);
  const library = createLibraryService(store, families, groups, tagger);

  for (const { cardId, ...card } of catalogue) {
    await cards.adminPut(cardId, {
      ...card,
      userId: 'cardshelf|catalogue',
      content: {
        activity: 'service_Player',
        version: '1',
        chapters: [chapter('01', card.title, [track('01', card.title, `${cardId}-1`)])],
      },
    });
  }
  log(`catalogue cards: ${catalogue.map((c) => c.cardId).join(', ')}`);

  await families.adminPut(DEMO_FAMILY, {
    country: 'US',
    flags: { sharingOn: true },
    members: [
      { userId: DEMO_USER, approved: true, verified: true, verifiedEmail: 'parent@example.com' },
      { userId: 'auth0|demo-coparent', approved: true, verified: false },
    ],
    devices: [{ deviceId: 'demo-player-kitchen' }, { deviceId: 'demo-player-bedroom' }],
  });
  log(`family ${DEMO_FAMILY}: 2 members, 2 devices`);

  if ((await listSummariesByOwner(store.db, DEMO_USER, true)).length === 0) {
    for (const card of myoCards) await cards.save(DEMO_USER, card);
  }
  log(`MYO cards of ${DEMO_USER}: ${myoCards.length}`);

  await library.add(DEMO_USER, 'dmFr1');
  await library.add(DEMO_USER, 'dmCl1');
  if ((await listGroups(store.db, DEMO_FAMILY)).length === 0) {
    await groups.create(DEMO_USER, {
      name: 'Bedtime',
      imageId: 'moon',
      items: [{ contentId: 'dmFr1' }, { contentId: 'dmCl1' }],
    });
  }
  log('library: dmFr1, dmCl1; group "Bedtime"');

  log(`public display icons: ${(await seedPublicIcons(store, config)).join(', ')}`);
}
