import { createHash } from 'node:crypto';
import type { AdapterPayload, KoaContextWithOIDC, Provider } from 'oidc-provider';
import type { Store } from '../db/dialect.js';
import { PUBLIC_AUDIENCE } from '../auth/verifier.js';
import { findPayload, upsertRecord } from './oauth-records-repository.js';
import type { ClientShown } from './pages.js';
export { PUBLIC_AUDIENCE };

/**
 * Where Cardshelf's sign-in departs from what the engine (oidc-provider) does by itself, each for
 * the client behaviour named. Everything else is the engine's.
 */

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** Seconds between device-code polls (RFC 8628 section 3.2); `slow_down` adds 5 (section 3.5). */
export const POLL_INTERVAL_SECONDS = 5;

const UNREGISTERED = 'cardshelf_unregistered';
export const EXTRA_CLIENT_METADATA = [UNREGISTERED];

/**
 * yoto-nodejs-client, yoto-js and yoto_api sign in with their own client ids, registered with the
 * public service, not here. Any well-formed id is taken as a public client (no secret, PKCE
 * required) that may use the device flow, and redirect flows only back to a loopback address
 * (RFC 8252): the approval page names it as unverified. Registered clients (model `Client` rows)
 * come first.
 */
export function unregisteredPublicClient(clientId: string): AdapterPayload | undefined {
  if (!/^[\x21-\x7e]{1,128}$/.test(clientId)) return undefined;
  return {
    client_id: clientId,
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    grant_types: [DEVICE_GRANT, 'authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: ['http://127.0.0.1/callback'],
    [UNREGISTERED]: true,
  };
}

/** The family web app's client id (web/src/auth.ts): a public client built into every instance. */
export const WEB_APP_CLIENT_ID = 'cardshelf-web';

/**
 * The family web app (served at /app/) signs in as a registered public client: the
 * authorization code flow with PKCE (required for every client), back to its own callback page
 * on this instance's public base URL only, and refresh tokens. Not the device flow.
 */
export function webAppClient(issuer: string): AdapterPayload {
  return {
    client_id: WEB_APP_CLIENT_ID,
    client_name: 'Cardshelf web app',
    application_type: 'web',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [`${issuer.replace(/\/+$/, '')}/app/callback`],
  };
}

/**
 * Client ids no app may have: the audiences the API accepts (LOCAL_AUDIENCE and the public one).
 * An ID token's `aud` is its client's id, so such a client's ID tokens would name the API.
 */
export const reservedClientIds = (audience: string): ReadonlySet<string> => new Set([audience, PUBLIC_AUDIENCE]);

/**
 * Registered rows first (the adapter), then the web app's built-in client, then any other id as
 * unregistered, but a reserved one (refused: the engine answers `invalid_client`).
 */
export const builtInOrUnregistered =
  (issuer: string, reserved: ReadonlySet<string>) =>
  (clientId: string): AdapterPayload | undefined =>
    clientId === WEB_APP_CLIENT_ID ? webAppClient(issuer) : reserved.has(clientId) ? undefined : unregisteredPublicClient(clientId);

export const isUnregistered = (client: { [key: string]: unknown } | undefined): boolean => client?.[UNREGISTERED] === true;

/**
 * The app the sign-in pages name. A device flow proves nothing about which app asks: anyone may
 * start one with any client id, and no redirect brings its answer back to that app. So its
 * client is shown as not verified even when the id is registered (a registered name would
 * otherwise lend a stranger's request its trust); the public clients use the device flow with
 * unregistered ids and are unaffected.
 */
export function clientShown(clientId: string, client: { clientName?: string; [key: string]: unknown } | undefined, deviceFlow: boolean): ClientShown {
  const unverified = deviceFlow || !client || isUnregistered(client);
  return { clientId, name: client?.clientName, unverified, firstParty: !unverified && clientId === WEB_APP_CLIENT_ID };
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

function isLoopbackRedirect(value: string): boolean {
  const url = URL.parse(value);
  return url?.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname) && url.username === '' && url.hash === '';
}

/**
 * The public clients' loopback sign-in (`http://127.0.0.1:<port>/callback`, as yoto.dev
 * recommends) picks its port at run time, and their paths differ: for an unregistered client, any
 * loopback redirect is allowed; the engine alone allows only a registered path.
 */
export function allowLoopbackRedirects(provider: Provider): void {
  type Client = { [key: string]: unknown };
  const proto = provider.Client.prototype as unknown as { redirectUriAllowed: (this: Client, value: string) => boolean };
  const engines = proto.redirectUriAllowed;
  proto.redirectUriAllowed = function (this: Client, value: string): boolean {
    return engines.call(this, value) || (isUnregistered(this) && isLoopbackRedirect(value));
  };
}

const POLLING_ERRORS = new Set(['authorization_pending', 'slow_down', 'expired_token', 'access_denied']);

interface PollRecord {
  last: number;
  interval: number;
}

/**
 * The device flow as the public clients poll it (a koa middleware around the engine):
 * - yoto-js and yoto_api treat `authorization_pending`, `slow_down`, `expired_token` and
 *   `access_denied` only when the status is 403, as the public service answers; the engine says 400.
 * - RFC 8628's `interval` is added to the device authorization answer, and enforced: a poll of a
 *   pending code sooner than the interval answers `slow_down`, and the interval grows by 5 seconds.
 *   The engine does neither. The last poll is kept with the engine's records, so every instance
 *   sees it.
 */
export function devicePolling(store: Store, routes: { token: string; deviceAuthorization: string }) {
  const polls = { model: 'DevicePoll' } as const;
  const key = (deviceCode: string): string => createHash('sha256').update(deviceCode).digest('base64url');

  async function tooSoon(deviceCode: string, now: number): Promise<boolean> {
    const id = key(deviceCode);
    const stored = await findPayload(store.db, polls.model, 'id', id);
    const seen = stored === undefined ? undefined : (JSON.parse(stored) as PollRecord);
    const early = seen !== undefined && now - seen.last < seen.interval * 1000;
    const next: PollRecord = { last: now, interval: (seen?.interval ?? POLL_INTERVAL_SECONDS) + (early ? 5 : 0) };
    await upsertRecord(store.db, polls.model, id, { payload: JSON.stringify(next), expires_at: new Date(now + 3600_000).toISOString() });
    return early;
  }

  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    await next();
    if (ctx.method !== 'POST') return;
    if (ctx.path === routes.deviceAuthorization && ctx.status === 200 && isRecord(ctx.body)) {
      ctx.body = { ...ctx.body, interval: POLL_INTERVAL_SECONDS };
      return;
    }
    const body = ctx.body;
    if (ctx.path !== routes.token || !isRecord(body) || typeof body.error !== 'string') return;
    if (ctx.oidc?.params?.grant_type !== DEVICE_GRANT) return;
    const deviceCode = ctx.oidc.params.device_code;
    if (body.error === 'authorization_pending' && typeof deviceCode === 'string' && (await tooSoon(deviceCode, Date.now()))) {
      ctx.body = { error: 'slow_down', error_description: 'you are polling too quickly; wait the interval between polls' };
      ctx.status = 403;
    } else if (POLLING_ERRORS.has(body.error)) {
      ctx.status = 403;
    }
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Buffer.isBuffer(value);

/** Scopes every account's access tokens carry. */
export const ACCOUNT_API_SCOPES = 'user:content:manage family:library:manage';

/**
 * The public clients ask only for `openid profile offline_access`, yet call the API with the
 * token: its `scope` claim is the account's API scopes, whatever was asked (formats.customizers.jwt).
 */
export function apiScopesInAccessToken(_ctx: unknown, _token: unknown, jwt: { payload: Record<string, unknown> }): void {
  jwt.payload.scope = ACCOUNT_API_SCOPES;
}
