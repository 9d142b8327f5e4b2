import { describe, expect, it } from 'vitest';
import { backoffMs, concerns, readEventStream, type LiveEvent } from '../../web/src/live.js';

/** A body that arrives in the given pieces, as a network delivers it. */
function body(pieces: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
      controller.close();
    },
  });
}

async function read(pieces: (string | Uint8Array)[]): Promise<{ events: LiveEvent[]; retries: number[] }> {
  const events: LiveEvent[] = [];
  const retries: number[] = [];
  await readEventStream(body(pieces), { onEvent: (e) => events.push(e), onRetry: (ms) => retries.push(ms) });
  return { events, retries };
}

describe("the web app's live events, read from the stream", () => {
  it('parses events split anywhere across chunks (a multi-byte character too), skips comments, passes on retry', async () => {
    const data = JSON.stringify({ kind: 'group.created', ids: { groupId: 'g1' }, read: '/card/family/library/groups/g1', tag: '"t1"' });
    const whole = `retry: 5000\n\n: heartbeat\n\nid: 7\nevent: group.created\ndata: ${data}\n\nid: 8\nevent: card.changed\ndata: {"kind":"card.changed","ids":{"cardId":"é"}}\n\n`;
    const bytes = new TextEncoder().encode(whole);
    const split = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
    const { events, retries } = await read([bytes.slice(0, 20), bytes.slice(20, split), bytes.slice(split)]);
    expect(retries).toEqual([5000]);
    expect(events).toEqual([
      { id: '7', kind: 'group.created', ids: { groupId: 'g1' }, read: '/card/family/library/groups/g1', tag: '"t1"' },
      { id: '8', kind: 'card.changed', ids: { cardId: 'é' } },
    ]);
  });

  it("a reset carries its id; data that is not the server's (not JSON, no kind) is skipped; an unfinished last event is not passed on", async () => {
    const { events } = await read([
      'id: 12\r\nevent: reset\r\ndata: {"kind":"reset"}\r\n\r\n',
      'event: odd\ndata: not json\n\n',
      'event: odd\ndata: {"ids":{}}\n\n',
      'id: 13\nevent: group.deleted\ndata: {"kind":"gr',
    ]);
    expect(events).toEqual([{ id: '12', kind: 'reset' }]);
  });

  it('a broken body rejects (the caller reconnects)', async () => {
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('id: 1\nevent: x\ndata: {}\n\n'));
        controller.error(new Error('connection reset'));
      },
    });
    const events: LiveEvent[] = [];
    await expect(readEventStream(broken, { onEvent: (e) => events.push(e), onRetry: () => undefined })).rejects.toThrow('connection reset');
  });

  it("waits the server's retry time, doubled with each failure in a row up to a minute, plus up to a fifth at random", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 10].map((n) => backoffMs(n, 5000, 0))).toEqual([5000, 5000, 10000, 20000, 40000, 60000, 60000, 60000]);
    expect(backoffMs(1, 5000, 0.99)).toBe(5990);
    expect(backoffMs(2, 1000, 0.5)).toBe(2200);
  });

  it('a page refetches for the kinds it names (exactly, or by prefix ending in a dot) and for every reset', () => {
    const library = ['library.added', 'group.', 'card.'];
    expect(concerns(library, { kind: 'group.created' })).toBe(true);
    expect(concerns(library, { kind: 'library.added' })).toBe(true);
    expect(concerns(library, { kind: 'card.deleted' })).toBe(true);
    expect(concerns(library, { kind: 'reset' })).toBe(true);
    expect(concerns(library, { kind: 'wishlist.changed' })).toBe(false);
    expect(concerns(library, { kind: 'library.addedx' })).toBe(false);
    expect(concerns(library, { kind: 'groups.created' })).toBe(false);
  });
});
