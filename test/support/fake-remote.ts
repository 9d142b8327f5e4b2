import { createHash, randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A remote that speaks just enough of the interface for a link (issue 34) and can be told to
 * misbehave: the device sign-in (`POST /oauth/device/code`, `/oauth/token` for the device and
 * refresh grants, `/oauth/revoke`), `GET /content/mine`, `GET /content/{id}[?playable=true]` and
 * the media URLs its playable cards give. It listens on 127.0.0.1 and is reached as
 * `http://localhost:<port>`, so its own host is a name: the media URLs it hands out may point at
 * other hosts (loopback by address, the metadata address) that the link must refuse.
 */
export interface FakeRequest {
  method: string;
  path: string;
  /** The query string, with its '?', or ''. */
  search: string;
  at: number;
  /** The form or JSON body, parsed. */
  form: Record<string, string>;
  bearer?: string;
}

export interface FakeCard {
  cardId: string;
  title: string;
  /** The hash its one track names (`yoto:#<hash>`). */
  audioHash: string;
  /** Where the playable card says the track is (absolute). */
  trackUrl: string;
}

/** Handles a request instead of the default; answers false to leave it to the default. */
export type Override = (req: FakeRequest, res: ServerResponse) => boolean | Promise<boolean>;

export interface FakeRemote {
  /** http://localhost:<port> */
  readonly base: string;
  readonly port: number;
  readonly requests: FakeRequest[];
  /** The cards GET /content/mine lists. */
  cards: FakeCard[];
  /** Media served at `${base}/media/<name>`, with an optional delay before the answer. */
  media: Map<string, { bytes: Buffer; contentType: string }>;
  mediaDelayMs: number;
  /** Answers to device-grant polls, in turn; once used up, tokens are given. */
  deviceAnswers: { status: number; body: Record<string, unknown> }[];
  /** Give no refresh token with the device grant's tokens. */
  withholdRefreshToken: boolean;
  /** Refuse refresh grants (400 invalid_grant). */
  refuseRefresh: boolean;
  /** Every access token and refresh token issued. */
  readonly issued: { access: string[]; refresh: string[] };
  /** From now on, the access tokens issued so far answer 401. */
  expireAccessTokens(): void;
  /** A one-off handler for `METHOD /path` (query left off), tried before the default. */
  override(route: string, handler: Override): void;
  clearOverrides(): void;
  /** A card whose track is at `trackUrl`, listed by /content/mine. */
  addCard(title: string, audioHash: string, trackUrl: string): FakeCard;
  /** Serves `bytes` as a media file; answers its URL. */
  serve(name: string, bytes: Buffer, contentType?: string): string;
  seen(route: string): FakeRequest[];
  close(): Promise<void>;
}

export const sha256Hex = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  if ((req.headers['content-type'] ?? '').includes('json')) return JSON.parse(text) as Record<string, string>;
  return Object.fromEntries(new URLSearchParams(text));
}

export async function startFakeRemote(): Promise<FakeRemote> {
  const requests: FakeRequest[] = [];
  const overrides = new Map<string, Override[]>();
  const valid = new Set<string>();
  let counter = 0;
  const token = (prefix: string): string => `${prefix}-${++counter}-${randomBytes(12).toString('hex')}`;

  const fake = {
    requests,
    cards: [] as FakeCard[],
    media: new Map<string, { bytes: Buffer; contentType: string }>(),
    mediaDelayMs: 0,
    deviceAnswers: [] as { status: number; body: Record<string, unknown> }[],
    withholdRefreshToken: false,
    refuseRefresh: false,
    issued: { access: [] as string[], refresh: [] as string[] },
  };

  const tokens = (withRefresh: boolean): Record<string, unknown> => {
    const access = token('fake-access');
    valid.add(access);
    fake.issued.access.push(access);
    const answer: Record<string, unknown> = { access_token: access, token_type: 'Bearer', expires_in: 3600 };
    if (withRefresh) {
      const refresh = token('fake-refresh');
      fake.issued.refresh.push(refresh);
      answer.refresh_token = refresh;
    }
    return answer;
  };

  const cardDoc = (card: FakeCard, playable: boolean): Record<string, unknown> => ({
    cardId: card.cardId,
    title: card.title,
    content: {
      chapters: [
        {
          key: '01',
          title: `${card.title} chapter`,
          tracks: [{ key: '01', title: `${card.title} track`, trackUrl: playable ? card.trackUrl : `yoto:#${card.audioHash}`, type: 'audio', format: 'aac' }],
        },
      ],
    },
    metadata: { description: `${card.title}, made at the fake remote` },
  });

  async function defaults(r: FakeRequest, res: ServerResponse): Promise<void> {
    const route = `${r.method} ${r.path}`;
    if (route === 'POST /oauth/device/code') {
      return json(res, 200, {
        device_code: token('device'),
        user_code: 'ABCD-EFGH',
        verification_uri: `${base}/activate`,
        verification_uri_complete: `${base}/activate?user_code=ABCD-EFGH`,
        expires_in: 600,
        interval: 1,
      });
    }
    if (route === 'POST /oauth/token') {
      if (r.form.grant_type === 'urn:ietf:params:oauth:grant-type:device_code') {
        const next = fake.deviceAnswers.shift();
        if (next) return json(res, next.status, next.body);
        return json(res, 200, tokens(!fake.withholdRefreshToken));
      }
      if (r.form.grant_type === 'refresh_token') {
        if (fake.refuseRefresh || !fake.issued.refresh.includes(r.form.refresh_token ?? '')) {
          return json(res, 400, { error: 'invalid_grant', error_description: 'the refresh token is not valid' });
        }
        return json(res, 200, tokens(true));
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (route === 'POST /oauth/revoke') return json(res, 200, {});
    if (r.path.startsWith('/media/')) {
      const file = fake.media.get(r.path.slice('/media/'.length));
      if (!file) return json(res, 404, { error: 'no such media' });
      if (fake.mediaDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.mediaDelayMs));
      res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.bytes.length });
      res.end(file.bytes);
      return;
    }
    if (r.path.startsWith('/content')) {
      if (!r.bearer || !valid.has(r.bearer)) return json(res, 401, { error: 'the access token is not valid' });
      if (route === 'GET /content/mine') {
        return json(res, 200, { cards: fake.cards.map((c) => ({ cardId: c.cardId, title: c.title })) });
      }
      const card = fake.cards.find((c) => `/content/${c.cardId}` === r.path);
      if (r.method === 'GET' && card) return json(res, 200, { card: cardDoc(card, r.search.includes('playable=true')) });
    }
    json(res, 404, { error: 'not found' });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    void (async () => {
      const auth = req.headers.authorization;
      const r: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        search: url.search,
        at: Date.now(),
        form: await readBody(req),
        ...(auth?.startsWith('Bearer ') ? { bearer: auth.slice(7) } : {}),
      };
      requests.push(r);
      for (const handler of overrides.get(`${r.method} ${r.path}`) ?? []) if (await handler(r, res)) return;
      await defaults(r, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `http://localhost:${port}`;

  return Object.assign(fake, {
    base,
    port,
    expireAccessTokens() {
      valid.clear();
    },
    override(route: string, handler: Override) {
      overrides.set(route, [...(overrides.get(route) ?? []), handler]);
    },
    clearOverrides() {
      overrides.clear();
    },
    addCard(title: string, audioHash: string, trackUrl: string): FakeCard {
      const card = { cardId: `fake${++counter}${randomBytes(3).toString('hex')}`, title, audioHash, trackUrl };
      fake.cards.push(card);
      return card;
    },
    serve(name: string, bytes: Buffer, contentType = 'audio/mpeg'): string {
      fake.media.set(name, { bytes, contentType });
      return `${base}/media/${name}`;
    },
    seen(route: string): FakeRequest[] {
      return requests.filter((r) => `${r.method} ${r.path}` === route);
    },
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** A server that only records what reaches it (the address a hostile remote points at); serves `bytes` at every path. */
export async function startBystander(host: string, bytes?: Buffer): Promise<{ port: number; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (!bytes) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('secret');
      return;
    }
    res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': bytes.length });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
