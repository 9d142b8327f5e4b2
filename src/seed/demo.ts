import { createHash } from 'node:crypto';
import type { Config } from '../config.js';
import type { AccountService } from '../accounts/service.js';
import { createTagger } from '../shared/entity-tag.js';
import type { Store } from '../db/dialect.js';
import { createCardService } from '../modules/cards/service.js';
import { createFamilyService } from '../modules/families/service.js';
import { createGroupService } from '../modules/groups/service.js';
import { createLibraryService } from '../modules/library/service.js';
import { DEMO_PLAYERS, demoFamilyDeviceIds, markDemoPlayers } from '../modules/devices/demo-players.js';
import type { CardInput } from '../modules/cards/schemas.js';
import { seedPublicIcons } from '../modules/media/demo-icons.js';

export const DEMO_USER = 'auth0|demo-parent';
export const DEMO_FAMILY = 'demofamily';
export const DEMO_EMAIL = 'parent@example.com';

/** The demo parent's account, so one can sign in as them; seeded again, it gets the new password. */
export async function seedDemoAccount(accounts: AccountService, password: string): Promise<void> {
  if (await accounts.find(DEMO_USER)) await accounts.resetPassword(DEMO_USER, password);
  else await accounts.add({ userId: DEMO_USER, email: DEMO_EMAIL, displayName: 'Demo Parent', password, owner: true });
}

/**
 * The demo's cards take the shape the public service documents and returns ("How playlists
 * work"): `yoto:#<sha256>` references, each track with its duration, size and channels, each
 * chapter with its totals, `metadata.media` with the card's. So the public client libraries'
 * own tests, pointed at a demo instance, see what they see on the service. The hashes name media
 * not stored here (cards may reference media that arrives later).
 */
const ref = (label: string): string => `yoto:#${createHash('sha256').update(`cardshelf-demo:${label}`).digest('hex')}`;

const track = (key: string, title: string, media: string, duration: number) => ({
  key,
  title,
  type: 'audio' as const,
  format: 'aac',
  trackUrl: ref(media),
  overlayLabel: String(Number(key)),
  duration,
  // About 128 kbit/s of AAC.
  fileSize: duration * 16_000,
  channels: 'stereo' as const,
  display: { icon16x16: ref('icon-star') },
  ambient: null,
});

type Track = ReturnType<typeof track>;
const sum = (tracks: readonly Track[], field: 'duration' | 'fileSize'): number => tracks.reduce((n, t) => n + t[field], 0);

const chapter = (key: string, title: string, tracks: Track[]) => ({
  key,
  title,
  overlayLabel: String(Number(key)),
  overlayLabelOverride: null,
  display: { icon16x16: ref('icon-moon') },
  availableFrom: null,
  ambient: null,
  defaultTrackAmbient: null,
  defaultTrackDisplay: null,
  duration: sum(tracks, 'duration'),
  fileSize: sum(tracks, 'fileSize'),
  tracks,
});

type Chapter = ReturnType<typeof chapter>;
const media = (chapters: readonly Chapter[]) => {
  const tracks = chapters.flatMap((c) => c.tracks);
  return { duration: sum(tracks, 'duration'), fileSize: sum(tracks, 'fileSize'), hasStreams: false };
};

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

const fairyTales = [
  chapter('01', 'Little Red Riding Hood', [track('01', 'Part one', 'fairy-1a', 214), track('02', 'Part two', 'fairy-1b', 187)]),
  chapter('02', 'The Three Bears', [track('01', 'The whole story', 'fairy-2a', 342)]),
];
const carSongs = [chapter('01', 'Wheels on the Bus', [track('01', 'Wheels on the Bus', 'song-1', 126)])];

const myoCards: CardInput[] = [
  {
    title: 'Grandma Reads Fairy Tales',
    metadata: { author: 'Grandma', category: 'stories', description: 'Recorded at the kitchen table.', media: media(fairyTales) },
    content: {
      activity: 'service_Player',
      version: '1',
      config: { autoadvance: 'repeat', onlineOnly: false },
      chapters: fairyTales,
    },
  },
  {
    title: 'Car Trip Songs',
    metadata: { author: 'Dad', category: 'music', media: media(carSongs) },
    content: { activity: 'service_Player', version: '1', chapters: carSongs },
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
          chapters: [chapter('01', card.title, [track('01', card.title, `${cardId}-1`, 300)])],
      },
    });
  }
  log(`catalogue cards: ${catalogue.map((c) => c.cardId).join(', ')}`);

  await families.adminPut(DEMO_FAMILY, {
    country: 'US',
    flags: { sharingOn: true },
    members: [
      { userId: DEMO_USER, approved: true, verified: true, verifiedEmail: DEMO_EMAIL },
      { userId: 'auth0|demo-coparent', approved: true, verified: false },
    ],
    // The players registered since (a browser made a player) stay: the list is the whole of them.
    devices: (await demoFamilyDeviceIds(store, DEMO_FAMILY)).map((deviceId) => ({ deviceId })),
  });
  await markDemoPlayers(store, DEMO_USER);
  log(`family ${DEMO_FAMILY}: 2 members, players ${DEMO_PLAYERS.map((p) => `${p.name} ${p.deviceId}`).join(', ')} (never opened, so offline)`);

  // Read back through the services, as a client would: seeding twice changes nothing.
  if ((JSON.parse((await cards.listMineTagged(DEMO_USER, true)).body) as { cards: unknown[] }).cards.length === 0) {
    for (const card of myoCards) await cards.save(DEMO_USER, card);
  }
  log(`MYO cards of ${DEMO_USER}: ${myoCards.length}`);

  await library.add(DEMO_USER, 'dmFr1');
  await library.add(DEMO_USER, 'dmCl1');
  if ((JSON.parse(await groups.list(DEMO_USER)) as unknown[]).length === 0) {
    await groups.create(DEMO_USER, {
      name: 'Bedtime',
      imageId: 'moon',
      items: [{ contentId: 'dmFr1' }, { contentId: 'dmCl1' }],
    });
  }
  log('library: dmFr1, dmCl1; group "Bedtime"');

  log(`public display icons: ${await seedPublicIcons(store, config)}`);
}
