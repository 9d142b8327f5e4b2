import { describe, expect, it } from 'vitest';
import type { components } from '../../web/src/api-types.js';
import { afterTrack, obey, queueOf, startIndex, type PlayerState } from '../../web/src/player-queue.js';

/** A card as a `playable=true` read answers it: signed URLs, but for one media reference not readable. */
const card = {
  cardId: 'c1',
  title: 'Our day',
  content: {
    chapters: [
      { key: 'a', title: 'Morning', display: { icon16x16: 'https://x/icon-a' }, tracks: [{ key: 'a1', title: 'Wake', trackUrl: 'https://x/a1' }, { key: 'a2', title: 'Eat', trackUrl: 'yoto:#00' }] },
      { key: 'b', title: 'Evening', tracks: [{ key: 'b1', title: 'Sleep', trackUrl: 'http://x/b1', display: { icon16x16: 'yoto:#11' } }] },
    ],
  },
} as unknown as components['schemas']['Card'];

const playing: PlayerState = { index: 0, playing: true, volume: 50, stopped: false };

describe('the browser player: its queue and commands', () => {
  it('queues the playable tracks in order, with their keys and the chapter icon when the track has none signed', () => {
    expect(queueOf(card).map((t) => [t.chapterKey, t.trackKey, t.url, t.icon])).toEqual([
      ['a', 'a1', 'https://x/a1', 'https://x/icon-a'],
      ['b', 'b1', 'http://x/b1', undefined],
    ]);
  });

  it('a card-play starts at the track named, else the chapter, else the first', () => {
    const queue = queueOf(card);
    expect(startIndex(queue, 'b', 'b1')).toBe(1);
    expect(startIndex(queue, 'b')).toBe(1);
    expect(startIndex(queue, 'zz')).toBe(0);
    expect(startIndex(queue)).toBe(0);
  });

  it('pause, resume, stop, next and previous within the queue; volume clamped to 0-100', () => {
    expect(obey(playing, { command: 'pause' }, 2).playing).toBe(false);
    expect(obey({ ...playing, playing: false }, { command: 'resume' }, 2).playing).toBe(true);
    expect(obey({ ...playing, playing: false }, { command: 'resume' }, 0).playing).toBe(false);
    expect(obey({ ...playing, index: 1 }, { command: 'stop' }, 2)).toEqual({ ...playing, index: 0, playing: false, stopped: true });
    expect(obey(playing, { command: 'next' }, 2).index).toBe(1);
    expect(obey({ ...playing, index: 1 }, { command: 'next' }, 2).index).toBe(1);
    expect(obey(playing, { command: 'previous' }, 2).index).toBe(0);
    expect(obey(playing, { command: 'volume', volume: 140 }, 2).volume).toBe(100);
    expect(obey(playing, { command: 'volumeUp' }, 2).volume).toBe(56);
    expect(obey({ ...playing, volume: 3 }, { command: 'volumeDown' }, 2).volume).toBe(0);
    expect(() => obey(playing, { command: 'dance' } as never, 2)).toThrow(/does not know the command/);
  });

  it.each([
    ['the first of two ends: the second plays', { ...playing, index: 0 }, { ...playing, index: 1 }],
    ['the last ends: stopped at the start', { ...playing, index: 1 }, { ...playing, index: 0, playing: false, stopped: true }],
  ])('at the end of a track, %s', (_, before, after) => {
    expect(afterTrack(before, 2)).toEqual(after);
  });
});
