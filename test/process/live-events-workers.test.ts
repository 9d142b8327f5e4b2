import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { openEventStream, type EventStreamClient } from '../support/event-stream.js';
import { http, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * Live events across the processes of one `cardshelf serve --workers 2` (issue 21): a write
 * answered by one worker reaches the streams held by the other. Which worker answered a request
 * is read from its log line: each request is sent with its own `x-request-id`, and each log line
 * names the request (`reqId`) and the process (`pid`).
 */
/** A POST on a connection of its own (fetch would keep one alive, and so stay on one worker). */
function postAlone(url: string, token: string, reqId: string, body: unknown): Promise<{ status: number; body: { id?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': reqId },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { id?: string } }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe(`live events between the workers of one serve --workers 2 on ${testDialect()}`, () => {
  let deployment: Deployment;
  let server: ServerProcess | undefined;
  const streams: EventStreamClient[] = [];

  beforeAll(async () => {
    deployment = await createDeployment();
    server = await startServer(deployment.env, { args: ['--workers', '2'] });
    // The first worker listening is enough for startServer; the primary hands connections to
    // workers that listen, so the test waits for the second.
    const listening = (): number => server!.stdout().split('\n').filter((line) => line.includes('Server listening at')).length;
    for (let waited = 0; listening() < 2; waited += 100) {
      if (waited > 30_000) throw new Error(`the second worker did not listen\n${server.stdout()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 60_000);

  afterAll(async () => {
    for (const s of streams) s.close();
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
  });

  /**
   * The pid of the worker that logged request `reqId` (its log lines are JSON, one a line). The
   * log reaches this process through a pipe, apart from the answer: a line may come just after.
   */
  const pidOf = (reqId: string): Promise<number> =>
    vi.waitFor(
      () => {
        for (const line of server!.stdout().split('\n')) {
          if (!line.includes(`"reqId":"${reqId}"`)) continue;
          const { pid } = JSON.parse(line) as { pid?: number };
          if (typeof pid === 'number') return pid;
        }
        throw new Error(`no log line of request ${reqId} within 10 s`);
      },
      { timeout: 10_000, interval: 50 },
    );

  it("delivers every write answered by one worker to the streams the other worker holds", async () => {
    const members = Array.from({ length: 6 }, (_, i) => `auth0|worker-member-${i}`);
    const admin = await deployment.token('auth0|operator', 'admin');
    const put = await http(server!.url, 'PUT', '/admin/families/workers-fam', {
      token: admin,
      body: { country: 'US', members: members.map((userId) => ({ userId, approved: true })) },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);

    // Streams until both workers hold at least one (the primary hands connections out in turn).
    const streamPid = new Map<EventStreamClient, number>();
    for (const [i, userId] of members.entries()) {
      const s = await openEventStream(server!.url, await deployment.token(userId, 'family:library:view'), { headers: { 'x-request-id': `stream-${i}` } });
      expect(s.status).toBe(200);
      streams.push(s);
      streamPid.set(s, await pidOf(`stream-${i}`));
      if (new Set(streamPid.values()).size === 2 && i >= 1) break;
    }
    expect(new Set(streamPid.values()).size, 'both workers hold a stream').toBe(2);

    // Writes until both workers answered at least one.
    const writes: { groupId: string; pid: number }[] = [];
    const token = await deployment.token(members[0]!);
    for (let i = 0; i < 12 && (writes.length < 4 || new Set(writes.map((w) => w.pid)).size < 2); i++) {
      const created = await postAlone(`${server!.url}/card/family/library/groups`, token, `write-${i}`, { name: `Group ${i}`, imageId: 'i', items: [] });
      expect(created.status).toBe(201);
      writes.push({ groupId: created.body.id as string, pid: await pidOf(`write-${i}`) });
    }
    expect(new Set(writes.map((w) => w.pid)).size, 'both workers answered a write').toBe(2);

    // Every stream gets every write's event, in the order of the writes; so a write answered by
    // one worker reached a stream of the other, both ways.
    let crossed = 0;
    for (const s of streams) {
      await s.waitFor((e) => e.event === 'group.created' && e.data.ids.groupId === writes.at(-1)!.groupId, 10_000);
      expect(s.events.filter((e) => e.event === 'group.created').map((e) => e.data.ids.groupId)).toEqual(writes.map((w) => w.groupId));
      crossed += writes.filter((w) => w.pid !== streamPid.get(s)).length;
    }
    expect(crossed).toBeGreaterThan(0);
  }, 90_000);
});
