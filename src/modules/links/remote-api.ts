import type { Readable } from 'node:stream';
import type { LinkRow } from '../../db/database.js';
import { remoteDownload, remoteJson, remoteUpload, RemoteError, withRetries, type RemotePolicy } from './remote-http.js';

/**
 * The linked remote's API, as its own apps call it: the member's access token as a bearer
 * token, refreshed once on a 401; 429 and 503 retried after `Retry-After`, other 5xx and network
 * failures with backoff (remote-http.ts withRetries). Media URLs the remote hands out (signed,
 * perhaps on another host) get no token.
 */
export interface RemoteApi {
  get<T>(path: string): Promise<T>;
  send<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, json: unknown, headers?: Record<string, string>): Promise<T>;
  /** The bytes at a URL the remote gave (a signed media URL), bounded by `maxBytes`. */
  download(url: string, maxBytes: number): Promise<{ body: Readable; contentType?: string }>;
  /**
   * Bytes to the remote's own path (with the token) or to a URL it signed (absolute, without);
   * `body` makes the stream afresh for each try.
   */
  upload<T>(target: { path: string } | { url: string }, method: 'PUT' | 'POST', body: UploadBody): Promise<T>;
}

export interface UploadBody {
  open(): Readable;
  size: number;
  contentType: string;
}

export interface RemoteApiDeps {
  link: Pick<LinkRow, 'link_id' | 'api_base_url'>;
  policy: RemotePolicy;
  accessToken(stale?: string): Promise<string>;
  /** Media downloads and uploads may be large: their own time limit. */
  mediaTimeoutMs: number;
}

export function createRemoteApi(deps: RemoteApiDeps): RemoteApi {
  const { link, policy } = deps;
  const base = link.api_base_url;
  const url = (path: string): string => `${base}${path.startsWith('/') ? path : `/${path}`}`;

  /** One call with the token; a 401 refreshes it and tries once more. */
  async function authorized<T>(call: (token: string) => Promise<T>): Promise<T> {
    const token = await deps.accessToken();
    try {
      return await call(token);
    } catch (err) {
      if (err instanceof RemoteError && err.status === 401) return call(await deps.accessToken(token));
      throw err;
    }
  }

  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  return {
    get: <T>(path: string) =>
      withRetries(() => authorized(async (token) => (await remoteJson<T>(policy, url(path), { headers: bearer(token) })).body)),

    send: <T>(method: 'POST' | 'PUT' | 'DELETE', path: string, json: unknown, headers: Record<string, string> = {}) =>
      withRetries(() =>
        authorized(async (token) => (await remoteJson<T>(policy, url(path), { method, json, headers: { ...headers, ...bearer(token) } })).body),
      ),

    download: (target: string, maxBytes: number) =>
      withRetries(() => remoteDownload(policy, target, { maxBytes, timeoutMs: deps.mediaTimeoutMs })),

    upload: <T>(target: { path: string } | { url: string }, method: 'PUT' | 'POST', body: UploadBody) => {
      const send = (to: string, headers: Record<string, string>) =>
        remoteUpload<T>(policy, to, { method, body: body.open(), contentLength: body.size, contentType: body.contentType, headers, timeoutMs: deps.mediaTimeoutMs }).then((r) => r.body);
      return withRetries(() => ('path' in target ? authorized((token) => send(url(target.path), bearer(token))) : send(target.url, {})));
    },
  };
}
