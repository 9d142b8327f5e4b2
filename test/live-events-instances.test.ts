import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from './support/deployment.js';
import { openEventStream } from './support/event-stream.js';
import { http, startServer, type ServerProcess } from './support/processes.js';
import { testDialect } from './support/test-database.js';

/**
 * Live events across instances (issue 21): two `cardshelf serve` processes on one database. A
 * write on one reaches the streams of the other: through LISTEN/NOTIFY on PostgreSQL, through
 * the poll of the log on SQLite (as between `serve --workers` processes). And SIGTERM ends the
 * streams of the instance that stops, which still exits 0.
 */
describe(`live events between two server processes on one ${testDialect()} database`, () => {
  let deployment: Deployment;
  let servers: ServerProcess[] = [];

  beforeAll(async () => {
    deployment = await createDeployment();
    servers = await Promise.all([startServer(deployment.env), startServer(deployment.env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL', 0)));
    await deployment?.close();
  });

  it("delivers each instance's writes to the other's streams, and ends streams on SIGTERM", async () => {
    const [a, b] = ['auth0|inst-a', 'auth0|inst-b'];
    const admin = await deployment.token('auth0|operator', 'admin');
    const put = await http(servers[0]!.url, 'PUT', '/admin/families/inst-fam', {
      token: admin,
      body: { country: 'US', members: [a, b].map((userId) => ({ userId, approved: true })) },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const onB = await openEventStream(servers[1]!.url, await deployment.token(b, 'family:library:view'));
    const onA = await openEventStream(servers[0]!.url, await deployment.token(a, 'family:library:view'));
    expect([onA.status, onB.status]).toEqual([200, 200]);

    // A's write reaches B's stream, and B's write A's.
    const created = await http(servers[0]!.url, 'POST', '/card/family/library/groups', {
      token: await deployment.token(a),
      body: { name: 'From A', imageId: 'i', items: [] },
    });
    expect(created.status).toBe(201);
    const seen = await onB.waitFor((e) => e.event === 'group.created' && e.data.ids.groupId === created.body.id, 10_000);
    const read = await http(servers[1]!.url, 'GET', `/card/family/library/groups/${created.body.id}`, { token: await deployment.token(b) });
    expect(seen.data.tag).toBe(read.headers.etag);
    const fromB = await http(servers[1]!.url, 'POST', '/card/family/library/groups', {
      token: await deployment.token(b),
      body: { name: 'From B', imageId: 'i', items: [] },
    });
    expect(fromB.status).toBe(201);
    await onA.waitFor((e) => e.event === 'group.created' && e.data.ids.groupId === fromB.body.id, 10_000);

    // SIGTERM: B's stream ends with a note, and B exits 0; A's stream goes on.
    const exit = await servers[1]!.stop('SIGTERM', 15_000);
    await onB.ended;
    expect(onB.comments).toContain('server shutting down; reconnect');
    expect(exit.code).toBe(0);
    expect(onA.isEnded()).toBe(false);
    onA.close();
  }, 60_000);
});
