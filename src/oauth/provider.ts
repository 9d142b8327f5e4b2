import { hkdfSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Configuration, KoaContextWithOIDC, Provider, interactionPolicy as InteractionPolicy } from 'oidc-provider';
import type { AccountService } from '../accounts/service.js';
import type { SigningKey } from '../auth/local-issuer.js';
import { LOCAL_ALG } from '../auth/local-issuer.js';
import type { TokenVerifier } from '../auth/verifier.js';
import type { Store } from '../db/dialect.js';
import { createAdapter } from './adapter.js';
import { loadExistingGrant } from './first-party.js';
import { codeConfirmPage, codeEntryPage, messagePage, signOutPage } from './pages.js';
import {
  ACCOUNT_API_SCOPES,
  DEVICE_GRANT,
  EXTRA_CLIENT_METADATA,
  PUBLIC_AUDIENCE,
  allowLoopbackRedirects,
  apiScopesInAccessToken,
  devicePolling,
  builtInOrUnregistered,
  clientShown,
  reservedClientIds,
} from './shims.js';
import { accessTokenRevocation, grantInAccessToken } from './token-revocation.js';

/** The paths the public clients call (DECISIONS.md, "Signing in"), on Cardshelf's own base URL. */
export const OAUTH_ROUTES = {
  authorization: '/authorize',
  token: '/oauth/token',
  device_authorization: '/oauth/device/code',
  code_verification: '/activate',
  revocation: '/oauth/revoke',
  userinfo: '/userinfo',
  // Signing out of the sign-in pages (the engine's RP-initiated logout; `/confirm` and `/success` after it).
  end_session: '/session/end',
  // Served by the app itself (GET /.well-known/jwks.json), from the same key.
  jwks: '/.well-known/jwks.json',
} as const;

/**
 * How long a browser stays signed in to the sign-in pages after signing in: the engine's session
 * lasts this long from the sign-in, and its cookie only as long as the browser (no expiry).
 */
export const SIGN_IN_SESSION_SECONDS = 12 * 3600;

/**
 * Approving a device or a new app needs a sign-in at most this old (`max_age` semantics): a
 * family tablet is shared, so whoever holds it later is asked for the password (or a passkey)
 * again before a device or an app gets the account.
 */
export const FRESH_SIGN_IN_SECONDS = 5 * 60;

/** The reason the engine gives (`prompt.reasons`) when it asks to sign in again for that. */
export const SIGN_IN_NOT_FRESH = 'sign_in_not_fresh';

/** Where the engine sends the browser to sign in or approve (src/oauth/plugin.ts serves it). */
export const INTERACTION_PATH = '/interaction';

export interface SignInOptions {
  store: Store;
  accounts: AccountService;
  key: SigningKey;
  /** The public base URL. */
  issuer: string;
  audience: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** How long a rotated refresh token may still be used (src/oauth/adapter.ts, refresh reuse). */
  refreshReuseGraceSeconds: number;
  cookieKeys: string[] | undefined;
  /** The API's token check: /oauth/revoke verifies the access tokens it is given with it. */
  verifier: TokenVerifier;
  /** Counts a wrong or expired code entered at /activate, against the address it came from. */
  wrongCodeEntered: (req: IncomingMessage) => Promise<void>;
}

/**
 * Cookie keys: from the settings, or else derived from the signing key, so instances that share
 * the key (they must, to verify each other's tokens) share the cookies' keys too.
 */
function cookieKeys(opts: SignInOptions, privateJwkD: string): string[] {
  if (opts.cookieKeys?.length) return opts.cookieKeys;
  return [Buffer.from(hkdfSync('sha256', Buffer.from(privateJwkD, 'base64url'), 'cardshelf', 'sign-in cookies', 32)).toString('base64url')];
}

/**
 * The engine builds the URLs it prints (discovery's endpoints and `jwks_uri`, `verification_uri`,
 * the code form's action) from its request's origin: every request it serves reports the public
 * base URL's, whatever its Host, X-Forwarded-Host or X-Forwarded-Proto say. Behind a proxy that
 * ends TLS, the connection here is plain HTTP, and yet the request is `secure` when the public
 * address is https: the engine's cookies are then sent Secure.
 */
function atPublicOrigin(provider: Provider, issuer: string): void {
  const { protocol, host } = new URL(issuer);
  // The engine is a Koa application: its `request` is the prototype of every request it serves.
  Object.defineProperties(provider.request, {
    protocol: { get: () => protocol.slice(0, -1) },
    host: { get: () => host },
  });
}

/** The request's sign-in session was made by this request and has not been stored (its `exp` comes with storing). */
const sessionNeverSaved = (ctx: KoaContextWithOIDC): boolean => typeof (ctx.oidc.session as { exp?: unknown } | undefined)?.exp !== 'number';

/**
 * The OAuth 2.0 / OpenID Connect engine (oidc-provider), configured for Cardshelf: accounts from
 * src/accounts, storage in the app's database, the instance's signing key, the grants the public
 * clients use (device code, authorization code with PKCE, refresh with rotation) and revocation.
 * No password grant: the engine has none.
 */
export async function createSignInProvider(opts: SignInOptions, privateJwk: Record<string, unknown>): Promise<{ provider: Provider; cookieKeys: string[] }> {
  // Loaded only when the embedded server is on: an external issuer never pays for it.
  const { default: ProviderClass, errors, interactionPolicy } = await import('oidc-provider');
  const keys = cookieKeys(opts, String(privateJwk.d));
  const secure = opts.issuer.startsWith('https:');
  const cookie = { httpOnly: true, sameSite: 'lax', secure } as const;
  const resourceServer = {
    scope: ACCOUNT_API_SCOPES,
    audience: opts.audience,
    accessTokenTTL: opts.accessTokenTtlSeconds,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: LOCAL_ALG } },
  } as const;

  const configuration: Configuration = {
    adapter: createAdapter(opts.store, builtInOrUnregistered(opts.issuer, reservedClientIds(opts.audience)), {
      refreshReuseGraceMs: opts.refreshReuseGraceSeconds * 1000,
      refuseUnstorable: () => new errors.InvalidRequest('a parameter contains the NUL character (U+0000)'),
    }),
    async findAccount(_ctx, sub) {
      const account = await opts.accounts.active(sub);
      if (!account) return undefined;
      return {
        accountId: account.userId,
        claims: async () => ({ sub: account.userId, name: account.displayName, email: account.email }),
      };
    },
    claims: { openid: ['sub'], profile: ['name'], email: ['email'] },
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    jwks: { keys: [{ ...privateJwk, kid: opts.key.kid, alg: LOCAL_ALG, use: 'sig' }] as never },
    clientDefaults: {
      id_token_signed_response_alg: LOCAL_ALG,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token', DEVICE_GRANT],
    },
    extraClientMetadata: { properties: EXTRA_CLIENT_METADATA },
    cookies: { keys, long: cookie, short: cookie },
    routes: OAUTH_ROUTES,
    loadExistingGrant,
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`, policy: freshSignInPolicy(interactionPolicy) },
    // An app's sign-in outlives the browser's: signing out of the pages (or the session ending)
    // leaves the devices and apps approved there signed in; /account signs them out one by one.
    expiresWithSession: () => false,
    // The authorization code flow only: no implicit or hybrid answers carrying tokens in URLs.
    responseTypes: ['code'],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          ctx.body = signOutPage(form);
        },
        async postLogoutSuccessSource(ctx) {
          ctx.type = 'html';
          ctx.body = messagePage('Signed out', 'You are signed out of Cardshelf in this browser. To connect a device or an app, start again from it: you will be asked to sign in.');
        },
      },
      pushedAuthorizationRequests: { enabled: false },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        async userCodeInputSource(ctx, form, _out, err) {
          if (err !== undefined && sessionNeverSaved(ctx)) {
            // A code posted without the session cookie of its form (another browser, cookies off;
            // a cookie whose session ended gets a new session and the form again): the form's
            // check value cannot match, and the form shown again could not work either (its
            // cookie is not set by now). The engine would go on to persist a session it never
            // saved, and fail with a 500.
            (ctx.oidc.session as unknown as { touched: boolean }).touched = false;
            ctx.status = 400;
            ctx.body = messagePage('This page has expired', 'Open the address the device shows again, and enter its code there.');
            return;
          }
          const wrong = err !== undefined && err.name !== 'AbortedError';
          if (wrong) await opts.wrongCodeEntered(ctx.req);
          const message = err ? (wrong ? 'That code is not right, or it has expired. Try again.' : 'The sign-in was cancelled.') : undefined;
          ctx.body = codeEntryPage(form, message);
        },
        async userCodeConfirmSource(ctx, form, client, _deviceInfo, userCode) {
          ctx.body = codeConfirmPage(form, clientShown(client.clientId, client, true), userCode);
        },
        async successSource(ctx) {
          ctx.body = messagePage('Device connected', 'You are signed in on the device. You can close this page.');
        },
      },
      resourceIndicators: {
        enabled: true,
        // Clients send no `resource`: their tokens are for this API, as the public ones for its.
        defaultResource: () => PUBLIC_AUDIENCE,
        useGrantedResource: () => true,
        async getResourceServerInfo(_ctx, indicator) {
          if (indicator !== PUBLIC_AUDIENCE && indicator !== opts.audience) throw new errors.InvalidTarget();
          return resourceServer;
        },
      },
    },
    formats: {
      customizers: {
        jwt(ctx, token, jwt) {
          apiScopesInAccessToken(ctx, token, jwt);
          grantInAccessToken(ctx, token, jwt);
        },
      },
    },
    ttl: {
      AccessToken: opts.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      DeviceCode: 600,
      IdToken: 3600,
      Interaction: 3600,
      Grant: opts.refreshTokenTtlSeconds,
      RefreshToken: opts.refreshTokenTtlSeconds,
      // From the sign-in, not from the last use: a session kept busy still ends.
      Session: (_ctx, session) => Math.max(1, (session.loginTs ?? epochSeconds()) + SIGN_IN_SESSION_SECONDS - epochSeconds()),
    },
    // yoto_api treats a refresh answer without `refresh_token` as malformed, and yoto-js keeps the
    // one it gets: every refresh rotates. Refresh tokens come with every grant that allows them.
    rotateRefreshToken: () => true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    async renderError(ctx, out) {
      ctx.type = 'html';
      ctx.body = messagePage('Sign-in failed', out.error_description ?? out.error ?? 'The request could not be completed.');
    },
  };

  const provider = new ProviderClass(opts.issuer, configuration);
  atPublicOrigin(provider, opts.issuer);
  allowLoopbackRedirects(provider);
  provider.use(accessTokenRevocation(opts.store, opts.verifier, OAUTH_ROUTES.revocation) as never);
  provider.use(devicePolling(opts.store, { token: OAUTH_ROUTES.token, deviceAuthorization: OAUTH_ROUTES.device_authorization }) as never);
  return { provider, cookieKeys: keys };
}

const epochSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * The engine's interaction policy with one check added to its login prompt: when the browser's
 * sign-in is older than FRESH_SIGN_IN_SECONDS and the request would have someone approve (a
 * device flow, always; an app that has no grant for what it asks), the engine asks to sign in
 * again, as an authorization request with `max_age` would. An app approved before (the web app
 * in a new tab) is still signed in without asking.
 */
function freshSignInPolicy(policies: typeof InteractionPolicy): InteractionPolicy.DefaultPolicy {
  const { Check } = policies;
  const policy = policies.base();
  const consent = policy.get('consent')!;
  const approving = async (ctx: KoaContextWithOIDC): Promise<boolean> => {
    if ((ctx.oidc as { deviceCode?: unknown }).deviceCode !== undefined || ctx.oidc.result?.consent) return true;
    for (const check of consent.checks) if (await check.check(ctx)) return true;
    return false;
  };
  policy.get('login')!.checks.add(
    new Check(SIGN_IN_NOT_FRESH, 'approving needs a recent sign-in', async (ctx) => {
      const { session, result } = ctx.oidc;
      if (!session?.accountId || result?.login || !session.past(FRESH_SIGN_IN_SECONDS)) return Check.NO_NEED_TO_PROMPT;
      return (await approving(ctx)) ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
    }),
  );
  return policy;
}

/**
 * Ends the engine's session of this browser (its session cookie names it), as signing out of
 * the pages does, without a page of the engine: for signing out of /account. The apps signed in
 * from it stay signed in (expiresWithSession).
 */
export async function endBrowserSignIn(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const session = await provider.Session.get(provider.createContext(req, res));
  if (session.accountId) await session.destroy();
}
