import { describe, expect, it } from 'vitest';
import { addability, familyContentRecord } from '../../src/modules/library/rules.js';

type Card = Parameters<typeof addability>[0] & object;

const card = (over: Partial<Card> = {}): Card => ({
  origin: 'catalogue',
  is_free: 0,
  in_club: 0,
  deleted: 0,
  ...over,
});

describe('addability', () => {
  it('lets free cards and club cards in', () => {
    expect(addability(card({ is_free: 1 }), false)).toBe('ok');
    expect(addability(card({ in_club: 1 }), false)).toBe('ok');
    expect(addability(card({ is_free: 1, in_club: 1 }), false)).toBe('ok');
  });

  it('refuses a catalogue card that is neither free nor in the club as not eligible', () => {
    expect(addability(card(), false)).toBe('not-eligible');
    expect(addability(card(), true)).toBe('not-eligible');
  });

  it('answers not-found for a missing card and a deleted one, eligible or not', () => {
    expect(addability(undefined, false)).toBe('not-found');
    expect(addability(card({ is_free: 1, deleted: 1 }), false)).toBe('not-found');
    expect(addability(card({ deleted: 1 }), true)).toBe('not-found');
    expect(addability(card({ origin: 'myo', is_free: 1, deleted: 1 }), true)).toBe('not-found');
  });

  it('finds a MYO card held already for a caller who may read it, whatever its availability', () => {
    expect(addability(card({ origin: 'myo' }), true)).toBe('held-as-family-content');
    expect(addability(card({ origin: 'myo', is_free: 1 }), true)).toBe('held-as-family-content');
  });

  it('answers not-found for a MYO card the caller may not read, even a free one', () => {
    expect(addability(card({ origin: 'myo', is_free: 1, in_club: 1 }), false)).toBe('not-found');
  });
});

describe('familyContentRecord', () => {
  const myo = { card_id: 'Ab3dE', user_id: 'auth0|owner', created_at: '2024-01-02T03:04:05.006Z' };

  it("is the record of the owner, from the card's creation", () => {
    const r = familyContentRecord('fam1', myo);
    expect(r).toEqual({
      record_id: expect.stringMatching(/^[0-9a-f]{24}$/),
      family_id: 'fam1',
      card_id: 'Ab3dE',
      provenance_id: 'auth0|owner',
      reason: 'USER_ADD',
      created_at: myo.created_at,
      updated_at: myo.created_at,
    });
  });

  it('has an id that is the same at every call, and differs between families and cards', () => {
    const id = familyContentRecord('fam1', myo).record_id;
    expect(familyContentRecord('fam1', myo).record_id).toBe(id);
    expect(familyContentRecord('fam2', myo).record_id).not.toBe(id);
    expect(familyContentRecord('fam1', { ...myo, card_id: 'Zz9yY' }).record_id).not.toBe(id);
  });
});
