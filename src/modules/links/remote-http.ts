import { lookup } from 'node:dns/promises';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import sjson from 'secure-json-parse';
import { addressKind } from './remote-address.js';

/**
 * The HTTP client for a linked remote service, which is untrusted input (issue 34, "A remote is
 * untrusted input"): every answer is bounded in time and size, and every URL, redirects included,
 * is fetched only over http(s) from an address that its rule allows, the very address that was
 * checked (the connection is made to that IP, so a second DNS answer cannot swap it).
 */
export interface RemotePolicy {
  /** The remote's own API and sign-in hosts: private/loopback addresses are allowed only when this host itself is one (a self-hosted remote on the same network). */
  trustedHosts: readonly string[];
  /** Operator setting: also allow private (RFC 1918, ULA fc00::/7, loopback, carrier-grade NAT) addresses for every URL. Link-local (the cloud metadata address), multicast and reserved addresses stay refused. */
  allowPrivateNetworks: boolean;
  /** Whole-request time limit: connect, headers and body. */
  timeoutMs: number;
  /** Largest JSON answer taken. */
  maxJsonBytes: number;
}

/** The defaults of a policy; trustedHosts come from the link. */
export const REMOTE_POLICY_DEFAULTS = {
  allowPrivateNetworks: false,
  timeoutMs: 30_000,
  maxJsonBytes: 5 * 1024 * 1024,
} as const satisfies Omit<RemotePolicy, 'trustedHosts'>;

export type RemoteErrorCode = 'refused-address' | 'too-large' | 'timeout' | 'bad-answer' | 'http' | 'network';

/**
 * Why a call to a remote failed. Messages name the method, origin and path only: never request
 * headers (the bearer token), bodies (refresh tokens) or query strings (signed URLs).
 */
export class RemoteError extends Error {
  readonly status?: number;
  readonly retryAfterMs?: number;
  constructor(
    readonly code: RemoteErrorCode,
    message: string,
    extra: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'RemoteError';
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.retryAfterMs !== undefined) this.retryAfterMs = extra.retryAfterMs;
  }
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Credentials meant for one origin only (as the Fetch standard drops them on a cross-origin redirect). */
const ORIGIN_BOUND_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/** Our own agents, kept alive; their pools are keyed by the checked IP, not the host name. */
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** A URL as it may appear in a message: no user info, no query (it may carry a signature). */
function describe(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** The URL's host as an address or name to connect to: an IPv6 literal without its brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function parseUrl(raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new RemoteError('bad-answer', 'the remote gave a URL that is not valid');
  }
}

/**
 * One time limit for a whole request: it destroys what it tracks (request, answer, body stream)
 * with a 'timeout' RemoteError, and rejects what it races (the DNS lookup).
 */
class Deadline {
  private readonly timer: NodeJS.Timeout;
  private readonly tracked = new Set<{ destroy(error?: Error): unknown }>();
  private readonly expiry: Promise<never>;
  private expired = false;
  readonly error: RemoteError;

  constructor(ms: number, url: URL) {
    this.error = new RemoteError('timeout', `${describe(url)}: no complete answer within ${ms} ms`);
    let reject!: (error: Error) => void;
    this.expiry = new Promise<never>((_, r) => (reject = r));
    this.expiry.catch(() => undefined);
    this.timer = setTimeout(() => {
      this.expired = true;
      reject(this.error);
      for (const stream of this.tracked) stream.destroy(this.error);
      this.tracked.clear();
    }, ms);
  }

  track(stream: { destroy(error?: Error): unknown }): void {
    if (this.expired) stream.destroy(this.error);
    else this.tracked.add(stream);
  }

  race<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.expiry]);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.tracked.clear();
  }
}

/**
 * The address to connect to for `url`, after checking every address its host resolves to: one
 * address refused refuses the URL (a host name cannot hide a private address behind a public one).
 */
async function checkedAddress(policy: RemotePolicy, url: URL): Promise<{ address: string; family: number }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RemoteError('refused-address', `${describe(url)}: refused, only http and https URLs are fetched`);
  }
  const host = bareHost(url);
  const family = isIP(host);
  let addresses: { address: string; family: number }[];
  if (family !== 0) {
    addresses = [{ address: host, family }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (err) {
      throw new RemoteError('network', `${describe(url)}: cannot resolve ${host}`, { cause: err });
    }
  }
  const mayBeLocal = policy.allowPrivateNetworks || policy.trustedHosts.includes(url.hostname);
  for (const { address } of addresses) {
    const kind = addressKind(address);
    if (kind === 'forbidden' || (kind === 'local' && !mayBeLocal)) {
      const why = kind === 'local' ? 'a local address, and this host is not the remote\'s own' : 'an address never fetched';
      throw new RemoteError('refused-address', `${describe(url)}: refused, ${host} is ${address}, ${why}`);
    }
  }
  const first = addresses[0];
  if (!first) throw new RemoteError('network', `${describe(url)}: ${host} has no address`);
  return first;
}

function asRemoteError(err: unknown, url: URL): RemoteError {
  if (err instanceof RemoteError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  return new RemoteError('network', `${describe(url)}: ${code ?? (err as Error).message}`, { cause: err });
}

type Body = Buffer | Readable;
interface Outgoing {
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: Body;
}

/** One request, to the checked address of `url`, with its Host and TLS name those of the URL. */
async function openHop(policy: RemotePolicy, url: URL, out: Outgoing, deadline: Deadline): Promise<IncomingMessage> {
  const { address, family } = await deadline.race(checkedAddress(policy, url));
  const secure = url.protocol === 'https:';
  const host = bareHost(url);
  const req = (secure ? https : http).request({
    agent: agents[secure ? 'https:' : 'http:'],
    host: address,
    family,
    port: url.port || (secure ? 443 : 80),
    method: out.method,
    path: `${url.pathname}${url.search}`,
    headers: { ...out.headers, host: url.host },
    ...(secure && isIP(host) === 0 ? { servername: host } : {}),
  });
  deadline.track(req);
  return new Promise<IncomingMessage>((resolve, reject) => {
    // `on`, not `once`: a socket may still fail after the answer came (a late second error would throw).
    req.on('error', (err) => reject(asRemoteError(err, url)));
    req.once('response', (res) => {
      deadline.track(res);
      resolve(res);
    });
    const { body } = out;
    if (body === undefined || Buffer.isBuffer(body)) {
      req.end(body);
      return;
    }
    // The caller's own stream failing is its error, not the remote's: passed on as it is.
    body.on('error', (err) => {
      reject(err);
      req.destroy();
    });
    body.pipe(req);
  });
}

/**
 * Sends `out` to `url`, following at most five redirects, each target checked as the first URL.
 * A 303 (and a 301 or 302 after a POST) continues as a GET without body; other redirects repeat
 * the method and body, which a streamed body cannot. Origin-bound headers are dropped once the
 * chain leaves the first origin.
 */
async function send(
  policy: RemotePolicy,
  first: URL,
  out: Outgoing,
  deadline: Deadline,
): Promise<{ res: IncomingMessage; url: URL }> {
  let url = first;
  let outgoing = out;
  for (let hop = 0; ; hop++) {
    const res = await openHop(policy, url, outgoing, deadline);
    const location = res.headers.location;
    if (!REDIRECT_STATUSES.has(res.statusCode ?? 0) || location === undefined) return { res, url };
    res.destroy();
    if (hop === MAX_REDIRECTS) {
      throw new RemoteError('bad-answer', `${describe(first)}: more than ${MAX_REDIRECTS} redirects`);
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new RemoteError('bad-answer', `${describe(url)}: redirects to a URL that is not valid`);
    }
    const status = res.statusCode ?? 0;
    const headers = { ...outgoing.headers };
    if (next.origin !== url.origin) for (const name of ORIGIN_BOUND_HEADERS) delete headers[name];
    if (status === 303 || ((status === 301 || status === 302) && outgoing.method === 'POST')) {
      for (const name of Object.keys(headers)) if (name.startsWith('content-')) delete headers[name];
      outgoing = { method: outgoing.method === 'HEAD' ? 'HEAD' : 'GET', headers };
    } else if (outgoing.body instanceof Readable) {
      throw new RemoteError('bad-answer', `${describe(url)}: redirects an upload that cannot be sent twice`);
    } else {
      outgoing = { ...outgoing, headers };
    }
    url = next;
  }
}

function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  const value = headers['content-length'];
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

/** Retry-After as milliseconds from now: delay-seconds or an HTTP-date (RFC 9110 10.2.3). */
export function retryAfterMs(value: string | undefined, nowMs: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

function httpError(method: string, url: URL, res: IncomingMessage): RemoteError {
  const status = res.statusCode ?? 0;
  res.destroy();
  const wait = status === 429 || status === 503 ? retryAfterMs(res.headers['retry-after']) : undefined;
  return new RemoteError('http', `${method} ${describe(url)} answered ${status}`, {
    status,
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  });
}

const isSuccess = (status: number): boolean => status >= 200 && status < 300;

function tooLarge(url: URL, max: number): RemoteError {
  return new RemoteError('too-large', `${describe(url)}: the answer is too large (more than ${max} bytes)`);
}

/**
 * The answer's JSON, read up to `max` bytes: refused as soon as its declared length or the bytes
 * read pass it. No body is `undefined` for 204 and 205 only; otherwise an answer that is not JSON
 * is a 'bad-answer'.
 */
async function readJson(res: IncomingMessage, url: URL, max: number): Promise<unknown> {
  const declared = declaredLength(res.headers);
  if (declared !== undefined && declared > max) {
    res.destroy();
    throw tooLarge(url, max);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) throw tooLarge(url, max);
      chunks.push(chunk);
    }
  } catch (err) {
    res.destroy();
    throw asRemoteError(err, url);
  }
  const status = res.statusCode ?? 0;
  if (size === 0 && (status === 204 || status === 205)) return undefined;
  try {
    return sjson.parse(Buffer.concat(chunks, size).toString('utf8'), undefined, {
      protoAction: 'error',
      constructorAction: 'error',
    });
  } catch {
    throw new RemoteError('bad-answer', `${describe(url)}: the answer (${status}) is not JSON`);
  }
}

function toHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

function lowerCaseNames(headers: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** JSON request/answer (GET/POST/PUT/DELETE) to an absolute URL; throws RemoteError (status set) on non-2xx unless opts.acceptStatus includes it. Answer body bounded by maxJsonBytes (refused as 'too-large' as soon as the bytes pass it, Content-Length checked first), parsed with secure-json-parse. */
export async function remoteJson<T = unknown>(
  policy: RemotePolicy,
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    json?: unknown;
    form?: Record<string, string>;
    acceptStatus?: number[];
  } = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const target = parseUrl(url);
  const method = (opts.method ?? 'GET').toUpperCase();
  const headers: Record<string, string> = { accept: 'application/json', ...lowerCaseNames(opts.headers) };
  let body: Buffer | undefined;
  if (opts.json !== undefined) {
    body = Buffer.from(JSON.stringify(opts.json));
    headers['content-type'] = 'application/json';
  } else if (opts.form !== undefined) {
    body = Buffer.from(new URLSearchParams(opts.form).toString());
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  if (body !== undefined) headers['content-length'] = String(body.length);
  const deadline = new Deadline(policy.timeoutMs, target);
  try {
    const { res, url: answered } = await send(policy, target, { method, headers, ...(body ? { body } : {}) }, deadline);
    const status = res.statusCode ?? 0;
    if (!isSuccess(status) && !opts.acceptStatus?.includes(status)) throw httpError(method, answered, res);
    const parsed = await readJson(res, answered, policy.maxJsonBytes);
    return { status, body: parsed as T, headers: toHeaders(res.headers) };
  } finally {
    deadline.clear();
  }
}

/** Passes bytes on until more than `max` have gone by, then fails with `error()`. */
function byteLimit(max: number, error: () => RemoteError): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done): void {
      seen += chunk.length;
      if (seen > max) done(error());
      else done(null, chunk);
    },
  });
}

/**
 * Streams a download (media) bounded by maxBytes and a time limit (opts.timeoutMs, else the
 * policy's) that runs until the body's last byte; returns a Node Readable of the body and its
 * declared type/length. The body fails with 'too-large' once maxBytes pass, with 'timeout' when
 * time is up; destroying it releases the connection.
 */
export async function remoteDownload(
  policy: RemotePolicy,
  url: string,
  opts: { maxBytes: number; timeoutMs?: number; headers?: Record<string, string> },
): Promise<{ body: Readable; contentType?: string; contentLength?: number }> {
  const target = parseUrl(url);
  const deadline = new Deadline(opts.timeoutMs ?? policy.timeoutMs, target);
  try {
    const { res, url: answered } = await send(
      policy,
      target,
      { method: 'GET', headers: lowerCaseNames(opts.headers) },
      deadline,
    );
    if (!isSuccess(res.statusCode ?? 0)) throw httpError('GET', answered, res);
    const contentLength = declaredLength(res.headers);
    if (contentLength !== undefined && contentLength > opts.maxBytes) {
      res.destroy();
      throw tooLarge(answered, opts.maxBytes);
    }
    const body = byteLimit(opts.maxBytes, () => tooLarge(answered, opts.maxBytes));
    deadline.track(body);
    res.on('error', (err) => body.destroy(asRemoteError(err, answered)));
    body.once('close', () => {
      deadline.clear();
      res.destroy();
    });
    res.pipe(body);
    const contentType = res.headers['content-type'];
    return {
      body,
      ...(contentType === undefined ? {} : { contentType }),
      ...(contentLength === undefined ? {} : { contentLength }),
    };
  } catch (err) {
    deadline.clear();
    throw err;
  }
}

/**
 * Uploads a body (PUT or POST) from a Readable or Buffer, answer JSON bounded as remoteJson.
 * The time limit (opts.timeoutMs, else the policy's) covers sending the body; a Readable body is
 * destroyed when the upload fails.
 */
export async function remoteUpload<T = unknown>(
  policy: RemotePolicy,
  url: string,
  opts: {
    method: 'PUT' | 'POST';
    body: Buffer | Readable;
    contentLength?: number;
    contentType?: string;
    headers?: Record<string, string>;
    timeoutMs?: number;
  },
): Promise<{ status: number; body: T }> {
  const target = parseUrl(url);
  const headers: Record<string, string> = { accept: 'application/json', ...lowerCaseNames(opts.headers) };
  if (opts.contentType !== undefined) headers['content-type'] = opts.contentType;
  const length = Buffer.isBuffer(opts.body) ? opts.body.length : opts.contentLength;
  if (length !== undefined) headers['content-length'] = String(length);
  const deadline = new Deadline(opts.timeoutMs ?? policy.timeoutMs, target);
  try {
    const { res, url: answered } = await send(policy, target, { method: opts.method, headers, body: opts.body }, deadline);
    const status = res.statusCode ?? 0;
    if (!isSuccess(status)) throw httpError(opts.method, answered, res);
    return { status, body: (await readJson(res, answered, policy.maxJsonBytes)) as T };
  } catch (err) {
    if (opts.body instanceof Readable) opts.body.destroy();
    throw err;
  } finally {
    deadline.clear();
  }
}

/** Exponential backoff with equal jitter: between half and all of base * 2^(n-1), capped. */
function backoffMs(attempt: number, baseDelayMs: number, maxWaitMs: number): number {
  const full = Math.min(maxWaitMs, baseDelayMs * 2 ** (attempt - 1));
  return full / 2 + Math.random() * (full / 2);
}

/** How long to wait before trying again after `err`, or undefined when it is not worth a retry. */
function retryDelayMs(err: unknown, attempt: number, baseDelayMs: number, maxWaitMs: number): number | undefined {
  if (!(err instanceof RemoteError)) return undefined;
  if (err.status === 429 || err.status === 503) {
    return Math.min(maxWaitMs, err.retryAfterMs ?? backoffMs(attempt, baseDelayMs, maxWaitMs));
  }
  if (err.code === 'network' || (err.code === 'http' && (err.status ?? 0) >= 500)) {
    return backoffMs(attempt, baseDelayMs, maxWaitMs);
  }
  return undefined;
}

/** Runs `attempt` again on RemoteError 429/503 (waiting Retry-After, seconds or HTTP-date, capped at maxWaitMs) and on 5xx/network errors (exponential backoff with jitter), at most `tries` times; other errors are thrown at once. Defaults: 5 tries, 60 s at most per wait, 500 ms base delay. */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  opts: { tries?: number; maxWaitMs?: number; baseDelayMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<T> {
  const tries = opts.tries ?? 5;
  const maxWaitMs = opts.maxWaitMs ?? 60_000;
  const baseDelayMs = opts.baseDelayMs ?? 500;
  const sleep = opts.sleep ?? ((ms: number): Promise<void> => delay(ms));
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      const wait = retryDelayMs(err, n, baseDelayMs, maxWaitMs);
      if (wait === undefined || n >= tries) throw err;
      await sleep(wait);
    }
  }
}
