import { describe, expect, it } from 'vitest';
import { reconcileList } from '../../src/modules/families/reconcile.js';

interface Entry {
  id: string;
  family: string;
}

/** Runs the rule for family `here` over an in-memory world of entries; returns what it did. */
async function run(world: Entry[], wanted: string[], here = 'A'): Promise<string[]> {
  const steps: string[] = [];
  await reconcileList<Entry>(wanted, {
    present: world.filter((e) => e.family === here),
    idOf: (e) => e.id,
    find: async (id) => world.find((e) => e.id === id),
    isHere: (e) => e.family === here,
    leave: async (e) => void steps.push(`leave ${e.id}`),
    stay: async (e, position) => void steps.push(`stay ${e.id}@${position}`),
    moveIn: async (id, position, previous) => void steps.push(`in ${id}@${position} from ${previous?.family ?? 'nowhere'}`),
  });
  return steps;
}

describe('reconcileList: the listed entries become the family\'s, in order', () => {
  it.each<[string, Entry[], string[], string[]]>([
    ['an empty list empties the family', [{ id: 'a', family: 'A' }, { id: 'b', family: 'A' }], [], ['leave a', 'leave b']],
    ['entries kept stay, at their new positions', [{ id: 'a', family: 'A' }, { id: 'b', family: 'A' }], ['b', 'a'], ['stay b@0', 'stay a@1']],
    ['a new entry moves in from nowhere', [], ['n'], ['in n@0 from nowhere']],
    ['an entry of another family moves in from there', [{ id: 'x', family: 'B' }], ['x'], ['in x@0 from B']],
    [
      'removals come before additions',
      [{ id: 'a', family: 'A' }, { id: 'x', family: 'B' }],
      ['x', 'n'],
      ['leave a', 'in x@0 from B', 'in n@1 from nowhere'],
    ],
  ])('%s', async (_name, world, wanted, expected) => {
    expect(await run(world, wanted)).toEqual(expected);
  });

  it('asks isHere, so an entry the family holds only in part (a stub membership) moves in anew', async () => {
    const steps: string[] = [];
    await reconcileList<Entry & { listed: boolean }>(['s'], {
      present: [],
      idOf: (e) => e.id,
      find: async () => ({ id: 's', family: 'A', listed: false }),
      isHere: (e) => e.family === 'A' && e.listed,
      leave: async () => void steps.push('leave'),
      stay: async () => void steps.push('stay'),
      moveIn: async (id, _position, previous) => void steps.push(`in ${id} from ${previous?.family ?? 'nowhere'}`),
    });
    expect(steps).toEqual(['in s from A']);
  });
});
