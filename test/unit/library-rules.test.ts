import { describe, expect, it } from 'vitest';
import { addability } from '../../src/modules/library/rules.js';

type Card = Parameters<typeof addability>[0] & object;

const card = (over: Partial<Card> = {}): Card => ({
  user_id: 'auth0|store',
  origin: 'catalogue',
  is_free: 0,
  in_club: 0,
  deleted: 0,
  ...over,
});

describe('addability', () => {
  it('lets free cards and club cards in', () => {
    expect(addability(card({ is_free: 1 }), 'auth0|u')).toBe('ok');
    expect(addability(card({ in_club: 1 }), 'auth0|u')).toBe('ok');
    expect(addability(card({ is_free: 1, in_club: 1 }), 'auth0|u')).toBe('ok');
  });

  it('refuses a card that is neither free nor in the club as not eligible', () => {
    expect(addability(card(), 'auth0|u')).toBe('not-eligible');
    expect(addability(card({ origin: 'myo', user_id: 'auth0|u' }), 'auth0|u')).toBe('not-eligible');
  });

  it('answers not-found for a missing card and a deleted one, eligible or not', () => {
    expect(addability(undefined, 'auth0|u')).toBe('not-found');
    expect(addability(card({ is_free: 1, deleted: 1 }), 'auth0|u')).toBe('not-found');
    expect(addability(card({ deleted: 1 }), 'auth0|u')).toBe('not-found');
    expect(addability(card({ origin: 'myo', user_id: 'auth0|u', is_free: 1, deleted: 1 }), 'auth0|u')).toBe(
      'not-found',
    );
  });

  it("answers not-found for another user's MYO card, even a free one, but lets the owner add it", () => {
    const myo = card({ origin: 'myo', user_id: 'auth0|owner', is_free: 1 });
    expect(addability(myo, 'auth0|other')).toBe('not-found');
    expect(addability(myo, 'auth0|owner')).toBe('ok');
  });

  it("treats another user's MYO card the caller's family library holds like any card there", () => {
    const myo = card({ origin: 'myo', user_id: 'auth0|owner', is_free: 1 });
    expect(addability(myo, 'auth0|member', true)).toBe('ok');
    expect(addability({ ...myo, deleted: 1 }, 'auth0|member', true)).toBe('not-found');
  });

  it('does not care who owns a catalogue card', () => {
    expect(addability(card({ user_id: 'auth0|someone', in_club: 1 }), 'auth0|u')).toBe('ok');
  });
});
