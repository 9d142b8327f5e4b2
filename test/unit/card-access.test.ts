import { describe, expect, it } from 'vitest';
import { cardVisibleTo, type CardAccessFacts } from '../../src/modules/cards/access.js';

const card = (over: Partial<CardAccessFacts> = {}): CardAccessFacts => ({
  card_id: 'c0001',
  user_id: 'auth0|owner',
  origin: 'myo',
  is_free: 0,
  deleted: 0,
  ...over,
});

describe('cardVisibleTo: who may read a card', () => {
  it.each<[string, CardAccessFacts, string, boolean, boolean]>([
    ['the owner reads their card', card(), 'auth0|owner', false, true],
    ['the owner reads their deleted card', card({ deleted: 1 }), 'auth0|owner', false, true],
    ['anyone reads a live free catalogue card', card({ origin: 'catalogue', is_free: 1 }), 'auth0|x', false, true],
    ['nobody else reads a deleted free catalogue card', card({ origin: 'catalogue', is_free: 1, deleted: 1 }), 'auth0|x', true, false],
    ['a member of a family holding it reads a MYO card', card(), 'auth0|member', true, true],
    ['a stranger does not read a MYO card', card(), 'auth0|x', false, false],
    ['a premium catalogue card in the family library is readable', card({ origin: 'catalogue' }), 'auth0|m', true, true],
    ['a premium catalogue card outside it is not', card({ origin: 'catalogue' }), 'auth0|m', false, false],
    ['a deleted card stays hidden though its record is held', card({ deleted: 1 }), 'auth0|member', true, false],
  ])('%s', async (_name, facts, reader, held, expected) => {
    expect(await cardVisibleTo(reader, facts, async () => held)).toBe(expected);
  });

  it('asks the family library only when the answer depends on it', async () => {
    let asked = 0;
    const holds = async (): Promise<boolean> => {
      asked += 1;
      return true;
    };
    await cardVisibleTo('auth0|owner', card(), holds);
    await cardVisibleTo('auth0|x', card({ origin: 'catalogue', is_free: 1 }), holds);
    await cardVisibleTo('auth0|x', card({ deleted: 1 }), holds);
    expect(asked).toBe(0);
    await cardVisibleTo('auth0|x', card(), holds);
    expect(asked).toBe(1);
  });
});
