import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { describe, expect, it } from 'vitest';
import { DatabaseUnavailable, UnstorableText } from '../../src/db/errors.js';
import { GuardedDriver } from '../../src/db/guarded-driver.js';

/** A driver whose connections fail as the test says, recording what reached them. */
class FakeDriver implements Driver {
  acquireFailures: Error[] = [];
  /** Failures of the next statements, whichever connection runs them. */
  statementFailures: Error[] = [];
  readonly sent: string[] = [];
  readonly released: number[] = [];
  private next = 0;

  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const failure = this.acquireFailures.shift();
    if (failure) throw failure;
    const id = ++this.next;
    const driver = this;
    return {
      id,
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        driver.sent.push(`${id}: ${query.sql}`);
        const failure = driver.statementFailures.shift();
        if (failure) throw failure;
        return { rows: [{ connection: id }] as R[] };
      },
      streamQuery: () => {
        throw new Error('not used');
      },
    } as DatabaseConnection & { id: number };
  }
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.released.push((connection as DatabaseConnection & { id: number }).id);
  }
  async destroy(): Promise<void> {}
}

const dropped = (): Error => new Error('Connection terminated unexpectedly');
const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const read = CompiledQuery.raw('select * from cards where card_id = $1', ['abcde']);
const write = { sql: 'insert into cards values ($1)', parameters: ['abcde'], query: { kind: 'InsertQueryNode' } } as unknown as CompiledQuery;

function guarded(opts: { reconnectWindowMs?: number; checkWritable?: () => void } = {}) {
  const fake = new FakeDriver();
  const driver = new GuardedDriver(fake, { reconnectWindowMs: opts.reconnectWindowMs ?? 1_000, checkWritable: opts.checkWritable });
  return { fake, driver };
}

describe('GuardedDriver', () => {
  it('tries a connection that cannot be made again within the window (nothing was sent)', async () => {
    const { fake, driver } = guarded();
    fake.acquireFailures = [refused(), refused()];
    const connection = await driver.acquireConnection();
    expect((await connection.executeQuery(read)).rows).toEqual([{ connection: 1 }]);
  });

  it('gives up after the window with DatabaseUnavailable (unreachable)', async () => {
    const { fake, driver } = guarded({ reconnectWindowMs: 0 });
    fake.acquireFailures = [refused()];
    const err = await driver.acquireConnection().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailable);
    expect((err as DatabaseUnavailable).reason).toBe('unreachable');
  });

  it('sends a read whose connection dropped again on a new connection, and gives the dropped one back once', async () => {
    const { fake, driver } = guarded();
    const connection = await driver.acquireConnection();
    fake.statementFailures = [dropped()];
    expect((await connection.executeQuery(read)).rows).toEqual([{ connection: 2 }]);
    await driver.releaseConnection(connection);
    expect(fake.released).toEqual([1, 2]);
  });

  it('never sends a write twice: a dropped connection under it answers DatabaseUnavailable', async () => {
    const { fake, driver } = guarded();
    const connection = await driver.acquireConnection();
    fake.statementFailures = [dropped()];
    await expect(connection.executeQuery(write)).rejects.toBeInstanceOf(DatabaseUnavailable);
    expect(fake.sent.filter((s) => s.includes('insert'))).toHaveLength(1);
  });

  it('never sends a read inside a transaction twice (the transaction died with the connection)', async () => {
    const { fake, driver } = guarded();
    const connection = await driver.acquireConnection();
    await driver.beginTransaction(connection, {});
    fake.statementFailures = [dropped()];
    await expect(connection.executeQuery(read)).rejects.toBeInstanceOf(DatabaseUnavailable);
    await driver.rollbackTransaction(connection);
    expect(fake.sent.filter((s) => s.includes('select'))).toHaveLength(1);
  });

  it('opens a transaction on a new connection when `begin` finds the pooled one dropped', async () => {
    const { fake, driver } = guarded();
    const connection = await driver.acquireConnection();
    fake.statementFailures = [dropped()];
    await driver.beginTransaction(connection, {});
    await connection.executeQuery(write);
    await driver.commitTransaction(connection);
    expect(fake.sent).toEqual(['1: begin', '2: begin', `2: ${write.sql}`, '2: commit']);
  });

  it('does not give a dropped connection back twice when no new one can be had', async () => {
    const { fake, driver } = guarded({ reconnectWindowMs: 0 });
    const connection = await driver.acquireConnection();
    fake.statementFailures = [dropped()];
    fake.acquireFailures = [refused()];
    await expect(connection.executeQuery(read)).rejects.toBeInstanceOf(DatabaseUnavailable);
    await driver.releaseConnection(connection);
    expect(fake.released).toEqual([1]);
  });

  it('refuses NUL in a text parameter before anything is sent', async () => {
    const { fake, driver } = guarded();
    const connection = await driver.acquireConnection();
    await expect(connection.executeQuery(CompiledQuery.raw('select $1', ['a\u0000b']))).rejects.toBeInstanceOf(UnstorableText);
    await expect(connection.executeQuery(CompiledQuery.raw('select $1', [['ok', 'b\u0000']]))).rejects.toBeInstanceOf(UnstorableText);
    expect(fake.sent).toEqual([]);
  });

  it('asks checkWritable before a commit and a write outside a transaction, not before reads', async () => {
    let checks = 0;
    let writable = true;
    const { fake, driver } = guarded({
      checkWritable: () => {
        checks += 1;
        if (!writable) throw new DatabaseUnavailable('moved');
      },
    });
    const connection = await driver.acquireConnection();
    await connection.executeQuery(read);
    expect(checks).toBe(0);
    await connection.executeQuery(write);
    expect(checks).toBe(1);
    await driver.beginTransaction(connection, {});
    await connection.executeQuery(write);
    expect(checks).toBe(1);
    writable = false;
    await expect(driver.commitTransaction(connection)).rejects.toMatchObject({ reason: 'moved' });
    expect(fake.sent).not.toContain('1: commit');
    // As Kysely does after a failed commit: the transaction's writes are rolled back, not kept.
    await driver.rollbackTransaction(connection);
    expect(fake.sent.at(-1)).toBe('1: rollback');
    await expect(connection.executeQuery(write)).rejects.toMatchObject({ reason: 'moved' });
  });

  it('maps failures of the database and leaves other errors as they are', async () => {
    const { fake, driver } = guarded();
    const connection = await driver.acquireConnection();
    fake.statementFailures = [Object.assign(new Error('disk full'), { code: '53100' })];
    await expect(connection.executeQuery(write)).rejects.toMatchObject({ reason: 'full' });
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    fake.statementFailures = [unique];
    await expect(connection.executeQuery(write)).rejects.toBe(unique);
  });
});
