import { describe, expect, it } from 'vitest';
import { webAppPolicy } from '../../src/http/security-headers.js';
import { builtInOrUnregistered, reservedClientIds, WEB_APP_CLIENT_ID } from '../../src/oauth/shims.js';
import { formatDuration, formatSize, naturalOrder } from '../../web/src/format.js';
import { numberedTitles } from '../../web/src/numbering.js';
import { cardsBytes } from '../../web/src/storage.js';
import { cardIdsOf, finished, signInAddress, type LinkView } from '../../web/src/links.js';
import { moveBy, moveSelected, moveTo, moveTrack, trackStep } from '../../web/src/reorder.js';

describe("the web app's rules, one at a time", () => {
  it('files sort naturally by name: 2 before 10, case aside', () => {
    expect(['10 c.mp3', 'b/2 b.mp3', '1 a.mp3', 'B/1 z.mp3'].sort(naturalOrder)).toEqual(['1 a.mp3', '10 c.mp3', 'B/1 z.mp3', 'b/2 b.mp3']);
    expect(['track10', 'Track9', 'track1'].sort(naturalOrder)).toEqual(['track1', 'Track9', 'track10']);
  });

  it('reordering moves one item and keeps the rest in order; moves past either end stop there', () => {
    const list = ['a', 'b', 'c', 'd'];
    expect(moveBy(list, 0, 1)).toEqual(['b', 'a', 'c', 'd']);
    expect(moveBy(list, 3, -1)).toEqual(['a', 'b', 'd', 'c']);
    expect(moveTo(list, 3, 0)).toEqual(['d', 'a', 'b', 'c']);
    expect(moveBy(list, 0, -1)).toEqual(list);
    expect(moveBy(list, 3, 5)).toEqual(list);
    expect(list).toEqual(['a', 'b', 'c', 'd']);
  });

  it('selected items move together, one place, stepping over the others; a block at an end stays', () => {
    const list = ['a', 'b', 'c', 'd', 'e'];
    const chosen = (set: string) => (x: string) => set.includes(x);
    expect(moveSelected(list, chosen('bd'), -1)).toEqual(['b', 'a', 'd', 'c', 'e']);
    expect(moveSelected(list, chosen('bd'), 1)).toEqual(['a', 'c', 'b', 'e', 'd']);
    expect(moveSelected(list, chosen('ab'), -1)).toEqual(list);
    expect(moveSelected(list, chosen('abd'), -1)).toEqual(['a', 'b', 'd', 'c', 'e']);
    expect(moveSelected(list, chosen('de'), 1)).toEqual(list);
  });

  it('a track moves in its chapter or into another; a chapter left empty goes', () => {
    const card = [{ tracks: ['a', 'b', 'c'] }, { tracks: ['d'] }, { tracks: ['e', 'f'] }];
    const tracks = (chapters: { tracks: string[] }[]) => chapters.map((c) => c.tracks.join(''));
    expect(tracks(moveTrack(card, { chapter: 0, track: 0 }, { chapter: 0, track: 2 }))).toEqual(['bca', 'd', 'ef']);
    expect(tracks(moveTrack(card, { chapter: 0, track: 1 }, { chapter: 2, track: 1 }))).toEqual(['ac', 'd', 'ebf']);
    expect(tracks(moveTrack(card, { chapter: 2, track: 1 }, { chapter: 0, track: 99 }))).toEqual(['abcf', 'd', 'e']);
    expect(tracks(moveTrack(card, { chapter: 1, track: 0 }, { chapter: 0, track: 0 }))).toEqual(['dabc', 'ef']);
    expect(tracks(moveTrack(card, { chapter: 5, track: 0 }, { chapter: 0, track: 0 }))).toEqual(['abc', 'd', 'ef']);
    expect(tracks(card)).toEqual(['abc', 'd', 'ef']);
  });

  it('a track moved one place past its chapter\'s edge goes to the neighbour chapter; the card\'s ends stop it', () => {
    const card = [{ tracks: ['a', 'b'] }, { tracks: ['c'] }];
    expect(trackStep(card, { chapter: 0, track: 0 }, 1)).toEqual({ chapter: 0, track: 1 });
    expect(trackStep(card, { chapter: 0, track: 1 }, 1)).toEqual({ chapter: 1, track: 0 });
    expect(trackStep(card, { chapter: 1, track: 0 }, -1)).toEqual({ chapter: 0, track: 2 });
    expect(trackStep(card, { chapter: 0, track: 0 }, -1)).toBeUndefined();
    expect(trackStep(card, { chapter: 1, track: 0 }, 1)).toBeUndefined();
  });

  it('bulk rename numbers a pattern from a start: every {n} takes the number; without one it goes at the end', () => {
    expect(numberedTitles('Part {n}', 3, 3)).toEqual(['Part 3', 'Part 4', 'Part 5']);
    expect(numberedTitles('{n}. Story {n}', 1, 2)).toEqual(['1. Story 1', '2. Story 2']);
    expect(numberedTitles('Side', 1, 2)).toEqual(['Side 1', 'Side 2']);
    expect(numberedTitles('  ', 7, 1)).toEqual(['7']);
    expect(numberedTitles('Part {n}', Number(''), 1)).toEqual(['Part 0']);
    expect(numberedTitles('Part {n}', Number('x'), 1)).toEqual(['Part 1']);
  });

  it("the storage figure is the sum of the cards' stated sizes; a card without one counts nothing", () => {
    expect(cardsBytes([{ metadata: { media: { fileSize: 1000 } } }, {}, { metadata: { media: { fileSize: 234 } } }, { metadata: {} }])).toBe(1234);
    expect(cardsBytes([])).toBe(0);
    expect(cardsBytes([{ metadata: { media: { fileSize: -5 } } }])).toBe(0);
  });

  it('durations and sizes go through Intl', () => {
    const seconds = new Intl.NumberFormat(undefined, { style: 'unit', unit: 'second', unitDisplay: 'narrow' }).format(5);
    expect(formatDuration(5)).toBe(seconds);
    expect(formatDuration(3723)).toMatch(/1.*2.*3/);
    expect(formatSize(999)).toBe(new Intl.NumberFormat(undefined, { style: 'unit', unit: 'byte', unitDisplay: 'long' }).format(999));
    expect(formatSize(1_500_000)).toBe(new Intl.NumberFormat(undefined, { style: 'unit', unit: 'megabyte', unitDisplay: 'short', maximumFractionDigits: 1 }).format(1.5));
  });

  it("the app's policy: nothing inline, this origin only, plus the media templates' origins", () => {
    const policy = webAppPolicy({ mediaUrlTemplate: 'https://media.example/files/{hash}', groupImageUrlTemplate: 'https://img.example/g/{imageId}' });
    expect(policy.scriptSrc).toEqual(["'self'"]);
    expect(policy.styleSrc).toEqual(["'self'"]);
    expect(policy.connectSrc).toEqual(["'self'"]);
    expect(policy.mediaSrc).toEqual(["'self'", 'blob:', 'https://media.example', 'https://img.example']);
    expect(Object.values(policy).flat().join(' ')).not.toMatch(/unsafe/);
  });

  it('the built-in client comes back to its own callback only, on the base URL; other ids stay unregistered, but the reserved', () => {
    const reserved = reservedClientIds('cardshelf');
    const client = builtInOrUnregistered('https://shelf.example/', reserved)(WEB_APP_CLIENT_ID)!;
    expect(client).toMatchObject({ client_id: 'cardshelf-web', token_endpoint_auth_method: 'none', redirect_uris: ['https://shelf.example/app/callback'] });
    expect(client.grant_types).not.toContain('urn:ietf:params:oauth:grant-type:device_code');
    expect(builtInOrUnregistered('https://shelf.example', reserved)('other-app')).toMatchObject({ cardshelf_unregistered: true });
    expect(builtInOrUnregistered('https://shelf.example', reserved)('cardshelf')).toBeUndefined();
    expect(builtInOrUnregistered('https://shelf.example', reserved)('https://api.yotoplay.com')).toBeUndefined();
  });

  it.each([
    ['abc', ['abc']],
    [' abc, def ', ['abc', 'def']],
    ['abc def\nghi', ['abc', 'def', 'ghi']],
    ['abc,,abc , def', ['abc', 'def']],
    [' , \n', []],
  ])('remote card ids typed as %j are %j (commas, spaces, lines; each once)', (typed, ids) => {
    expect(cardIdsOf(typed)).toEqual(ids);
  });

  it("a link's sign-in opens the address with the code in it when the remote gives one; a copy done or failed is finished", () => {
    const link = { verificationUri: 'https://r.example/activate' } as LinkView;
    expect(signInAddress(link)).toBe('https://r.example/activate');
    expect(signInAddress({ ...link, verificationUriComplete: 'https://r.example/activate?user_code=AB' })).toBe('https://r.example/activate?user_code=AB');
    expect(signInAddress({} as LinkView)).toBeUndefined();
    expect((['queued', 'running', 'done', 'failed'] as const).map((state) => finished({ state }))).toEqual([false, false, true, true]);
  });
});
