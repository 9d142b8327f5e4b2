import { createHash } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, onSendAsyncHookHandler } from 'fastify';
import type { Store } from '../db/dialect.js';
import {
  claimKey,
  completeKey,
  findKey,
  releaseKey,
  sweepKeys,
  takeOverKey,
  type IdempotencyKeyRow,
  type KeyClaim,
} from '../db/idempotency-keys.js';
import type { CommitStep } from '../db/unit-of-work.js';
import { AppError, badRequest } from '../shared/errors.js';
import type { RawJson } from '../shared/raw-json.js';
import { hooksOf, JSON_CONTENT_TYPE } from './route-app.js';

/**
 * Idempotent POSTs (the IETF draft "The Idempotency-Key HTTP Header Field", on Stripe's model).
 * A route with `config.idempotent` takes an `Idempotency-Key`; its first request with a key
 * claims the key in the database (the primary key (user, key) decides between racing requests,
 * on every instance), runs, and stores its answer. Later requests of the same user with the key:
 *
 * - the same request (method, path and query, JSON body) gets the stored answer again, status and
 *   body, with `Idempotent-Replayed: true`, without running;
 * - another request: 422 `idempotency-key-reused`;
 * - while the first still runs: 409 `idempotency-key-in-use`, with `Retry-After`.
 *
 * A request that writes stores its answer in the transaction of its write (`answerWithWrite`):
 * both commit, or neither, so no crash can leave a create done and its key free to run it again.
 * Any other answer is stored on its way out. A first request the server fails (5xx) gives its key
 * back, so a retry runs again; a 4xx is an answer like any other and is replayed. A request that
 * never finished (its instance died) holds its key for LEASE_MS, then a retry may run. Keys last
 * TTL_MS, then are ignored and swept. Requests refused before their handler (token, validation)
 * never claim a key.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route creates something: it takes an `Idempotency-Key` (see http/idempotency.ts). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    /** The key this request claimed, to store its answer under. */
    idempotencyClaim: KeyClaim | null;
  }
}

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** How long a key holds its answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a claim of a request that has not answered stands (requests answer in seconds). */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** How often each instance removes expired keys. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

const KEY = new RegExp(`^[A-Za-z0-9\\-_.:~+/=]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);

/** The key of the header (a bare token, or a quoted string as the draft writes it), or a 400. */
export function parseIdempotencyKey(header: string | string[]): string {
  const value = Array.isArray(header) ? undefined : header.trim();
  const key = value?.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value;
  if (key === undefined || !KEY.test(key)) {
    throw badRequest(
      `Idempotency-Key must be given once, as 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters of letters, digits and -_.:~+/= (a UUID, say)`,
    );
  }
  return key;
}

/** What makes two requests the same one: method, path with query, and the JSON body. */
function fingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n`)
    .update(JSON.stringify(request.body ?? null))
    .digest('base64url');
}

type Outcome =
  | { kind: 'run'; claim: KeyClaim }
  | { kind: 'replay'; row: IdempotencyKeyRow }
  | { kind: 'in-flight' }
  | { kind: 'reused' };

const keyInUse = (): AppError =>
  new AppError('idempotency-key-in-use', 'a request with this Idempotency-Key is still being processed; retry shortly', {
    'retry-after': '1',
  });

/** Decides what a request with a key does: run (having claimed it), replay, or be refused. */
async function begin(store: Store, userId: string, key: string, print: string): Promise<Outcome> {
  // A key can be released or swept between a failed claim and the read: then claim again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const nowMs = Date.now();
    const claim: KeyClaim = { userId, key, fingerprint: print, at: new Date(nowMs).toISOString() };
    if (await claimKey(store.db, claim)) return { kind: 'run', claim };
    const row = await findKey(store.db, userId, key);
    if (!row) continue;
    const expired = Date.parse(row.created_at) <= nowMs - IDEMPOTENCY_TTL_MS;
    const abandoned = row.state === 'in-flight' && Date.parse(row.claimed_at) <= nowMs - IDEMPOTENCY_LEASE_MS;
    if (!expired && row.fingerprint !== print) return { kind: 'reused' };
    if (expired || abandoned) {
      if (await takeOverKey(store.db, row, claim)) return { kind: 'run', claim };
      continue;
    }
    return row.state === 'done' ? { kind: 'replay', row } : { kind: 'in-flight' };
  }
  return { kind: 'in-flight' };
}

/** The answer of an idempotent route: its status and its JSON, serialised as it is sent. */
export interface JsonAnswer {
  status: number;
  body: RawJson;
}

/**
 * Runs a route's write so that its answer commits with it. `write` hands the step it is given to
 * its service's unit of work; there, after the write and in its transaction, the step renders the
 * answer from the write's result and, for a request holding an Idempotency-Key, stores it as the
 * key's answer. A write that ended without a unit of work (the answer came from a read) is
 * rendered after, and its answer stored on the way out like any other. The route sends `answer`.
 *
 * A key taken over while its request still ran (its lease ran out) is another request's now:
 * this one's write is rolled back, and it answers 409 `idempotency-key-in-use`.
 */
export async function answerWithWrite<T>(
  request: FastifyRequest,
  write: (alsoCommit: CommitStep<T>) => Promise<T>,
  render: (result: T) => JsonAnswer,
): Promise<{ result: T; answer: JsonAnswer }> {
  const claim = request.idempotencyClaim;
  let rendered: JsonAnswer | undefined;
  const result = await write(async (trx, written) => {
    rendered = render(written);
    if (claim && !(await completeKey(trx, claim, { ...rendered, contentType: JSON_CONTENT_TYPE }))) {
      // The key is the other request's: this answer is not its to store.
      request.idempotencyClaim = null;
      throw keyInUse();
    }
  });
  // Committed with its answer: nothing is left to store on the way out.
  if (rendered && claim) request.idempotencyClaim = null;
  return { result, answer: rendered ?? render(result) };
}

/** The hooks of idempotent routes, and the sweep of expired keys (stopped when the app closes). */
export function registerIdempotency(app: FastifyInstance, store: Store): void {
  app.decorateRequest('idempotencyClaim', null);

  // Decided once per route as it is added: routes that create nothing pay nothing for it.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.preHandler = [...hooksOf(route.preHandler), claimKey];
    route.onSend = [...hooksOf(route.onSend), storeAnswer];
  });

  // After authentication and validation (app-wide preHandlers run before a route's own): a
  // request refused before its handler claims nothing.
  async function claimKey(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = parseIdempotencyKey(header);
    const outcome = await begin(store, request.principal.userId, key, fingerprint(request));
    switch (outcome.kind) {
      case 'run':
        request.idempotencyClaim = outcome.claim;
        return undefined;
      case 'replay': {
        const { row } = outcome;
        if (row.content_type) reply.type(row.content_type);
        return reply
          .code(row.status ?? 200)
          .header('idempotent-replayed', 'true')
          .send(row.body ?? '');
      }
      case 'in-flight':
        throw keyInUse();
      case 'reused':
        throw new AppError(
          'idempotency-key-reused',
          'this Idempotency-Key was used for a different request; use a new key for a new request',
        );
    }
  }

  // Every answer of a claiming request passes here, errors included: it is stored, or (5xx) the
  // key is given back. The answer waits for this, so a retry after it finds the key done.
  const storeAnswer: onSendAsyncHookHandler = async (request, reply, payload) => {
    const claim = request.idempotencyClaim;
    if (!claim) return payload;
    request.idempotencyClaim = null;
    try {
      if (reply.statusCode >= 500) await releaseKey(store.db, claim);
      else {
        const contentType = reply.getHeader('content-type');
        await completeKey(store.db, claim, {
          status: reply.statusCode,
          contentType: typeof contentType === 'string' ? contentType : null,
          body: typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '',
        });
      }
    } catch (err) {
      // The answer goes out anyway; the key's claim lapses after its lease.
      request.log.error({ err }, 'could not store the answer of an Idempotency-Key');
    }
    return payload;
  };

  const timer = setInterval(() => void sweep(store, app.log), SWEEP_INTERVAL_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}

/** Removes the keys older than their time to live. */
export async function sweep(store: Store, log: FastifyBaseLogger): Promise<number> {
  try {
    return await sweepKeys(store.db, new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString());
  } catch (err) {
    log.warn({ err }, 'could not sweep expired idempotency keys');
    return 0;
  }
}
