import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadOrCreateSigningKey, mintToken } from '../../src/auth/local-issuer.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { App } from '../../src/http/route-app.js';
import { contractChecker, liveEventChecker, type ContractCheck } from './contract.js';
import { createTestDatabase, type TestDialect } from './test-database.js';

export const ALL_USER_SCOPES = 'user:content:manage family:library:manage';

export interface TestApp {
  app: App;
  config: Readonly<Config>;
  dataDir: string;
  /** A token of the local issuer for `sub` (scopes space-separated). */
  token(sub: string, scope?: string, expiresIn?: string): Promise<string>;
  /** Calls the app like a client: JSON in, parsed JSON out. */
  call(method: string, url: string, opts?: CallOptions): Promise<Reply>;
  close(): Promise<void>;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is, instead of JSON of `body`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  body: any;
  headers: LightMyRequestResponse['headers'];
  raw: LightMyRequestResponse;
}

/**
 * A fresh app on a fresh database, built exactly as production builds it, with the
 * environment `env` on top of the defaults. The database is the one of the test project
 * (SQLite or PostgreSQL: see vitest.config.ts) unless `opts.dialect` names another; `close` removes it.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  opts: {
    dialect?: TestDialect;
    /** Hooks the test adds before the app is ready (to stop a request at a chosen point, say). */
    prepare?: (app: App) => void;
  } = {},
): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cardshelf-test-'));
  const breaches: string[] = [];
  const database = await createTestDatabase(opts.dialect);
  let app: App;
  let config: Readonly<Config>;
  try {
    config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...database.env, ...env });
    app = await buildApp(config);
    opts.prepare?.(app);
    watchContract(app, breaches);
    await app.ready();
  } catch (err) {
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const keyFile = config.auth.mode === 'local' ? config.auth.keyFile : undefined;
  const throwBreaches = (): void => {
    if (breaches.length > 0) throw new Error(`answers that break the OpenAPI document:\n${breaches.splice(0).join('\n')}`);
  };

  return {
    app,
    config,
    dataDir,
    async token(sub, scope = ALL_USER_SCOPES, expiresIn = '1h') {
      if (!keyFile || config.auth.mode !== 'local') throw new Error('not on the local issuer');
      const key = await loadOrCreateSigningKey(keyFile);
      return mintToken(key, { sub, scope, expiresIn, issuer: config.auth.issuer, audience: config.auth.audience });
    },
    async call(method, url, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let payload: string | Buffer | undefined;
      if (opts.rawBody !== undefined) payload = opts.rawBody;
      else if (opts.body !== undefined) {
        payload = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const raw = await app.inject({ method: method as 'GET', url, headers, payload });
      throwBreaches();
      let body: unknown = raw.body;
      try {
        body = raw.body === '' ? undefined : JSON.parse(raw.body);
      } catch {
        // not JSON: leave the text for the test to see
      }
      return { status: raw.statusCode, body, headers: raw.headers, raw };
    },
    async close() {
      try {
        await app.close();
        // Answers to requests made with app.inject directly, not through call().
        throwBreaches();
      } finally {
        await database.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The contract hook: every answer the app sends is checked against the OpenAPI document it
 * serves (test/support/contract.ts), and so is every live event its streams send (they are
 * written to the raw response, past `onSend`); what breaks it is collected, and call() or
 * close() fails.
 */
function watchContract(app: App, breaches: string[]): void {
  let check: ContractCheck | undefined;
  let checkEvent: ReturnType<typeof liveEventChecker> | undefined;
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url !== '/user/family/events') return;
    checkEvent ??= liveEventChecker(app.swagger() as never);
    const raw = reply.raw;
    let pending = '';
    const read = (chunk: unknown): void => {
      if (typeof chunk !== 'string') return;
      pending += chunk;
      let at: number;
      while ((at = pending.indexOf('\n\n')) >= 0) {
        const lines = pending.slice(0, at).split('\n');
        pending = pending.slice(at + 2);
        const field = (name: string): string | undefined => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        const data = field('data');
        if (data === undefined) continue;
        const breach = checkEvent!({ event: field('event'), data });
        if (breach) breaches.push(breach);
      }
    };
    const write = raw.write.bind(raw) as (...args: unknown[]) => boolean;
    const end = raw.end.bind(raw) as (...args: unknown[]) => typeof raw;
    raw.write = ((...args: unknown[]) => (read(args[0]), write(...args))) as typeof raw.write;
    raw.end = ((...args: unknown[]) => (read(args[0]), end(...args))) as typeof raw.end;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    check ??= contractChecker(app.swagger() as never);
    if (payload !== null && typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload; // streams: docs assets
    const breach = check({
      method: request.method,
      route: request.routeOptions.url,
      status: reply.statusCode,
      contentType: reply.getHeader('content-type') as string | undefined,
      body: payload === null ? '' : payload.toString(),
    });
    if (breach) breaches.push(breach);
    return payload;
  });
}

/** Asserts the documented error shape and returns the code. */
export function errorCode(reply: Reply): string {
  const err = reply.body?.error;
  if (!err || typeof err.code !== 'string' || typeof err.message !== 'string') {
    throw new Error(`not an error body (status ${reply.status}): ${reply.raw.body.slice(0, 300)}`);
  }
  return err.code;
}

/** A minimal valid MYO card body. */
export function cardBody(title = 'My card', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title,
    metadata: { category: 'stories', author: 'Test' },
    content: {
      activity: 'service_Player',
      chapters: [
        {
          key: '01',
          title: 'Chapter one',
          display: { icon16x16: 'service:#icon1' },
          tracks: [{ key: '01', title: 'Track', type: 'audio', format: 'aac', trackUrl: 'service:#abc123' }],
        },
      ],
    },
    ...extra,
  };
}
