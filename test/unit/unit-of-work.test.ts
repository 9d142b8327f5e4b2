import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/dialect.js';
import { familyLock, inUnitOfWork, userLock } from '../../src/db/unit-of-work.js';

/** A store whose transactions record the locks taken, in order, and whether they committed. */
function recordingStore() {
  const events: string[] = [];
  const trx = { isTransaction: true };
  const store = {
    db: {
      transaction: () => ({
        execute: async <T>(fn: (t: unknown) => Promise<T>): Promise<T> => {
          events.push('begin');
          try {
            const result = await fn(trx);
            events.push('commit');
            return result;
          } catch (err) {
            events.push('rollback');
            throw err;
          }
        },
      }),
    },
    dialect: {
      lockKey: async (t: unknown, key: string) => {
        expect(t).toBe(trx);
        events.push(`lock ${key}`);
      },
    },
  } as unknown as Store;
  return { store, events, trx };
}

describe('inUnitOfWork: a transaction holding named locks', () => {
  it('takes the locks at its start, in key order, each once, and runs the work in the same transaction', async () => {
    const { store, events, trx } = recordingStore();
    const result = await inUnitOfWork(store, [userLock('b'), familyLock('f'), userLock('a'), userLock('b')], async (t) => {
      expect(t).toBe(trx);
      events.push('work');
      return 42;
    });
    expect(result).toBe(42);
    expect(events).toEqual(['begin', 'lock family:f', 'lock user:a', 'lock user:b', 'work', 'commit']);
  });

  it('takes further locks that depend on what it read, inside the same transaction', async () => {
    const { store, events } = recordingStore();
    await inUnitOfWork(store, [familyLock('f')], async (_t, lockMore) => {
      events.push('read members');
      await lockMore([userLock('z'), userLock('m')]);
    });
    expect(events).toEqual(['begin', 'lock family:f', 'read members', 'lock user:m', 'lock user:z', 'commit']);
  });

  it('rolls back (releasing its locks) when the work fails', async () => {
    const { store, events } = recordingStore();
    await expect(
      inUnitOfWork(store, [userLock('u')], async () => {
        throw new Error('limit reached');
      }),
    ).rejects.toThrow('limit reached');
    expect(events).toEqual(['begin', 'lock user:u', 'rollback']);
  });

  it('runs a commit step last, in the same transaction, with the work\'s result', async () => {
    const { store, events, trx } = recordingStore();
    const result = await inUnitOfWork(
      store,
      [userLock('u')],
      async () => {
        events.push('work');
        return { id: 7 };
      },
      async (t, done) => {
        expect(t).toBe(trx);
        events.push(`record ${done.id}`);
      },
    );
    expect(result).toEqual({ id: 7 });
    expect(events).toEqual(['begin', 'lock user:u', 'work', 'record 7', 'commit']);
  });

  it('rolls the work back when its commit step fails: neither commits without the other', async () => {
    const { store, events } = recordingStore();
    await expect(
      inUnitOfWork(
        store,
        [],
        async () => events.push('work'),
        async () => {
          throw new Error('could not record');
        },
      ),
    ).rejects.toThrow('could not record');
    expect(events).toEqual(['begin', 'work', 'rollback']);
  });

  it('names locks for the users and families they serialise, apart from each other', () => {
    expect(userLock('auth0|x').key).toBe('user:auth0|x');
    expect(familyLock('auth0|x').key).not.toBe(userLock('auth0|x').key);
  });
});
