import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { InteractionResults, Provider } from 'oidc-provider';
import { createAccountService, type AccountService } from '../accounts/service.js';
import { createInvitationService, type SignupPolicy } from '../accounts/invitations.js';
import { createSetupLinkService } from '../accounts/setup-link.js';
import type { FamilyService } from '../modules/families/service.js';
import { accountPage } from './account-page.js';
import { invitationRoutes } from './invitation-routes.js';
import { joinPages } from './join-pages.js';
import { deviceCookieHeader, deviceCookieOf } from './device-cookie.js';
import { signInWithPassword, WRONG_PASSWORD } from '../accounts/password-sign-in.js';
import { signInWithPasskey } from '../accounts/passkey-sign-in.js';
import { createPasskeyService, sweepPasskeyChallenges, type PasskeyService } from '../accounts/passkeys.js';
import { sweepAccountSessions } from '../accounts/account-sessions.js';
import { createThrottle, sweepThrottle, type Counter, type Throttle } from '../accounts/throttle.js';
import { createDeviceCookies } from '../accounts/device-cookies.js';
import type { Config } from '../config.js';
import { AppError } from '../shared/errors.js';
import { readPrivateJwk, loadOrCreateSigningKey } from '../auth/local-issuer.js';
import type { Store } from '../db/dialect.js';
import { sweepExpired } from './adapter.js';
import { acceptForms, createFormGuard, type FormGuard } from './form-guard.js';
import { approvePage, messagePage, PAGE_CSP, signInPage } from './pages.js';
import { serveSignInScripts } from './passkey-scripts.js';
import { createSignInProvider, endBrowserSignIn, FRESH_SIGN_IN_SECONDS, INTERACTION_PATH, OAUTH_ROUTES, SIGN_IN_NOT_FRESH, type SignInOptions } from './provider.js';
import { clientShown } from './shims.js';

/** How often expired codes, tokens and sessions are removed. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;

/**
 * The engine's routes, each answered by the engine itself (the JWKS excepted: the app serves it),
 * with the methods it serves there: any other gets the app's 405, not the engine's bare 404.
 */
const ENGINE_ROUTES: [('GET' | 'POST')[], string][] = [
  [['GET'], '/.well-known/openid-configuration'],
  [['GET'], '/.well-known/oauth-authorization-server'],
  [['GET'], OAUTH_ROUTES.authorization],
  [['GET'], `${OAUTH_ROUTES.authorization}/:uid`],
  [['POST'], OAUTH_ROUTES.token],
  [['POST'], OAUTH_ROUTES.device_authorization],
  [['GET', 'POST'], OAUTH_ROUTES.code_verification],
  [['GET'], `${OAUTH_ROUTES.code_verification}/:uid`],
  [['POST'], OAUTH_ROUTES.revocation],
  [['GET', 'POST'], OAUTH_ROUTES.userinfo],
  [['GET', 'POST'], OAUTH_ROUTES.end_session],
  [['POST'], `${OAUTH_ROUTES.end_session}/confirm`],
  [['GET'], `${OAUTH_ROUTES.end_session}/success`],
];

/**
 * The request's URL with the path of its route (`:name` parameters filled in) and the query as
 * sent. The engine's resume URLs (`/:uid`), which it makes itself, carry no query: one sent there
 * is dropped, since the engine takes it for the request's parameters when the resume fails, and
 * then fails itself (`?client_id=` of a known app answered 500).
 */
function routePath(request: FastifyRequest): string {
  const route = request.routeOptions.url!;
  const params = request.params as Record<string, string>;
  const path = route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const query = request.raw.url!.indexOf('?');
  return query === -1 || route.includes('/:') ? path : path + request.raw.url!.slice(query);
}

export interface SignInPluginOptions extends Omit<SignInOptions, 'key' | 'wrongCodeEntered'> {
  keyFile: string;
  families: Pick<FamilyService, 'ensureFamilyId' | 'findFamilyId' | 'join'>;
  signup: SignupPolicy;
  invitationsPerMember: number;
}

/**
 * Signing in on the embedded default: the engine (src/oauth/provider.ts) at the public clients'
 * paths, and the pages it sends the browser to (sign in, approve). The engine reads its own
 * request bodies, so its routes hand the request over before Fastify parses anything.
 */
export async function signInPlugin(app: FastifyInstance, opts: SignInPluginOptions): Promise<void> {
  const key = await loadOrCreateSigningKey(opts.keyFile);
  const throttle = createThrottle(opts.store);
  // The client's address as the app sees it, for the engine's hooks, which see only the request.
  const addresses = new WeakMap<IncomingMessage, string>();
  const codeEntryFrom = (address: string): Counter[] => [{ rule: 'codeEntry', subject: address }];
  const wrongCodeEntered = async (req: IncomingMessage): Promise<void> => {
    const address = addresses.get(req);
    if (address !== undefined) await throttle.count(codeEntryFrom(address));
  };
  const { provider, cookieKeys } = await createSignInProvider({ ...opts, key, wrongCodeEntered }, await readPrivateJwk(opts.keyFile));
  const engine = provider.callback();

  /**
   * Refuses what comes too often from this address (src/accounts/throttle.ts); true when it did.
   * Keyed on the route the request matched, not on its URL: the router also matches other
   * spellings of a path (a trailing or doubled slash, percent-encoded letters).
   */
  async function throttled(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const route = request.routeOptions.url;
    if (request.method === 'POST' && route === OAUTH_ROUTES.device_authorization) {
      const wait = await throttle.take([{ rule: 'deviceCode', subject: request.ip }]);
      if (wait === 0) return false;
      // In the OAuth error shape the clients read, with the code the public service uses.
      reply
        .code(429)
        .header('retry-after', String(wait))
        .header('cache-control', 'no-store')
        .send({ error: 'too_many_requests', error_description: `too many device codes were requested from this address; try again in ${wait} seconds` });
      return true;
    }
    const entersCode = request.method === 'POST' || (request.query as Record<string, unknown>).user_code !== undefined;
    if (route === OAUTH_ROUTES.code_verification && entersCode) {
      const wait = await throttle.waitSeconds(codeEntryFrom(request.ip));
      if (wait === 0) return false;
      reply
        .code(429)
        .header('retry-after', String(wait))
        .header('cache-control', 'no-store')
        .header('content-security-policy', PAGE_CSP)
        .type('text/html; charset=utf-8')
        .send(messagePage('Too many tries', `Too many codes were entered from here. Try again in ${wait} seconds.`));
      return true;
    }
    return false;
  }

  const handOver = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (await throttled(request, reply)) return reply;
    addresses.set(request.raw, request.ip);
    // The engine routes on the URL itself: it gets the path of the route that was matched (and
    // throttled), whatever spelling of it was sent.
    request.raw.url = routePath(request);
    reply.hijack();
    // What the app's hooks set so far (CORS, the request id) goes out with the engine's answer.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.raw.setHeader('content-security-policy', PAGE_CSP);
    void engine(request.raw, reply.raw);
    return undefined;
  };
  for (const [method, url] of ENGINE_ROUTES) {
    app.route({
      method,
      url,
      schema: { hide: true },
      onRequest: handOver,
      handler: async () => {
        throw new Error('unreachable: the engine answers in onRequest');
      },
    });
  }

  const passkeys = createPasskeyService(opts.store, opts.accounts, opts.issuer);
  serveSignInScripts(app);
  const guard = createFormGuard(opts.issuer, cookieKeys);
  await app.register(interactionPages, { provider, accounts: opts.accounts, guard, throttle, passkeys, cookieKeys, secureCookies: opts.issuer.startsWith('https:') });
  const setupLinks = createSetupLinkService(opts.store, opts.accounts, opts.families);
  const invitations = createInvitationService(opts.store, opts.accounts, opts.families, opts.invitationsPerMember);
  await app.register(invitationRoutes, { invitations, signup: opts.signup, invitationsPerMember: opts.invitationsPerMember, publicBaseUrl: opts.issuer });
  await app.register(joinPages, { invitations, setupLinks, throttle, signup: opts.signup, publicBaseUrl: opts.issuer, cookieKeys });
  await app.register(accountPage, {
    store: opts.store,
    accounts: opts.accounts,
    throttle,
    publicBaseUrl: opts.issuer,
    cookieKeys,
    passkeys,
    endBrowserSignIn: (request, reply) => endBrowserSignIn(provider, request.raw, reply.raw),
  });

  // An instance with no accounts prints a one-time link that makes the first owner. On stderr,
  // not in the log: it is for the operator starting the server, whatever LOG_LEVEL says.
  app.addHook('onListen', async () => {
    const secret = await setupLinks.issueIfEmpty();
    if (secret === undefined) return;
    const url = `${opts.issuer.replace(/\/$/, '')}/setup/${secret}`;
    process.stderr.write(`cardshelf: no accounts yet; open this link once, within 24 hours, to make the first owner: ${url}\n`);
  });

  const sweep = (): void => {
    Promise.all([sweepExpired(opts.store), sweepThrottle(opts.store), sweepPasskeyChallenges(opts.store), sweepAccountSessions(opts.store)]).catch((err: unknown) =>
      app.log.warn({ err }, 'sweeping expired sign-in records failed'),
    );
  };
  const timer = setInterval(sweep, SWEEP_EVERY_MS).unref();
  app.addHook('onReady', async () => sweep());
  app.addHook('onClose', async () => clearInterval(timer));
}

interface PagesOptions {
  provider: Provider;
  accounts: AccountService;
  guard: FormGuard;
  throttle: Throttle;
  passkeys: PasskeyService;
  /** The sign-in cookies' keys (the known-device cookies are keyed from them). */
  cookieKeys: string[];
  /** `PUBLIC_BASE_URL` is https: cookies set here are `Secure`. */
  secureCookies: boolean;
}

type Form = Record<string, string | undefined>;
type UidRequest = FastifyRequest<{ Params: { uid: string }; Body: Form }>;

/**
 * The sign-in and approval pages. Forms carry a CSRF token of the pages' one form guard
 * (src/oauth/form-guard.ts) bound to the interaction's id, which the engine binds to this browser
 * with its own cookie, so a form posted from elsewhere (without the token, with one of another
 * sign-in, or from another site) is refused.
 */
async function interactionPages(app: FastifyInstance, opts: PagesOptions): Promise<void> {
  const { provider, accounts, throttle, passkeys, guard } = opts;
  const devices = createDeviceCookies(opts.cookieKeys);
  const PURPOSE = 'sign-in';
  const csrfFor = (uid: string): string => guard.tokenFor(PURPOSE, uid);
  const checkCsrf = (request: FastifyRequest<{ Params: { uid: string } }>, sent: string | undefined): void => guard.check(request, PURPOSE, sent, request.params.uid);

  acceptForms(app);
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', PAGE_CSP).header('cache-control', 'no-store');
  });

  async function details(request: UidRequest, reply: FastifyReply) {
    let found;
    try {
      found = await provider.interactionDetails(request.raw, reply.raw);
    } catch {
      found = undefined;
    }
    if (!found || found.uid !== request.params.uid) {
      throw new AppError('bad-request', 'this sign-in has expired or was started in another browser; start again from the app');
    }
    const clientId = String(found.params.client_id);
    const client = await provider.Client.find(clientId);
    return { interaction: found, client: clientShown(clientId, client, found.deviceCode !== undefined) };
  }

  // `remember: false`: the engine's session cookie has no expiry, so it ends with the browser
  // (and the session itself SIGN_IN_SESSION_SECONDS after signing in, whichever comes first).
  const loginResult = (accountId: string): { accountId: string; remember: boolean } => ({ accountId, remember: false });

  const action = (uid: string, step: 'login' | 'confirm' | 'passkey' | 'passkey/options'): string => `${INTERACTION_PATH}/${encodeURIComponent(uid)}/${step}`;

  async function render(request: UidRequest, reply: FastifyReply, error?: string, email?: string): Promise<string> {
    const { interaction, client } = await details(request, reply);
    const uid = interaction.uid;
    reply.type('text/html; charset=utf-8');
    const account = interaction.session?.accountId ? await accounts.active(interaction.session.accountId) : undefined;
    if (interaction.prompt.name === 'login') {
      const passkey = passkeys.available ? { options: action(uid, 'passkey/options'), verify: action(uid, 'passkey'), csrf: csrfFor(uid) } : undefined;
      // Signed in, but too long ago to approve (provider.ts, freshSignInPolicy): the same person is asked again.
      const again = interaction.prompt.reasons.includes(SIGN_IN_NOT_FRESH) && account !== undefined;
      const notice = again ? `You signed in here more than ${FRESH_SIGN_IN_SECONDS / 60} minutes ago: sign in again to approve. Not ${account.displayName}? Sign in with your own account.` : undefined;
      return signInPage({ action: action(uid, 'login'), csrf: csrfFor(uid), client, error, notice, email: email ?? (again ? account.email : undefined), passkey });
    }
    return approvePage({ action: action(uid, 'confirm'), csrf: csrfFor(uid), client, accountName: account?.displayName ?? 'you', signOut: OAUTH_ROUTES.end_session });
  }

  async function finish(request: UidRequest, reply: FastifyReply, result: InteractionResults, merge: boolean): Promise<FastifyReply> {
    const to = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: merge });
    return reply.code(303).header('location', to).send();
  }

  const uidParams = { type: 'object', properties: { uid: { type: 'string', maxLength: 128 } }, required: ['uid'] } as const;
  const formBody = { type: 'object', additionalProperties: { type: 'string' } } as const;

  app.get(`${INTERACTION_PATH}/:uid`, { schema: { hide: true, params: uidParams } }, async (request, reply) =>
    render(request as UidRequest, reply),
  );

  app.post(`${INTERACTION_PATH}/:uid/login`, { schema: { hide: true, params: uidParams, body: formBody } }, async (req, reply) => {
    const request = req as UidRequest;
    checkCsrf(request, request.body.csrf);
    const { interaction } = await details(request, reply);
    if (interaction.prompt.name !== 'login') return render(request, reply);
    const email = request.body.email ?? '';
    const outcome = await signInWithPassword(accounts, throttle, devices, { email, password: request.body.password ?? '', address: request.ip, device: deviceCookieOf(request) });
    if ('waitSeconds' in outcome) {
      reply.code(429).header('retry-after', String(outcome.waitSeconds));
      return render(request, reply, `Too many attempts to sign in. Try again in ${outcome.waitSeconds} seconds.`, email);
    }
    if ('wrong' in outcome) return render(request, reply, WRONG_PASSWORD, email);
    reply.header('set-cookie', deviceCookieHeader(outcome.deviceCookie, opts.secureCookies));
    return finish(request, reply, { login: loginResult(outcome.account.userId) }, false);
  });

  // Signing in with a passkey: the page script asks for options, then sends the browser's answer
  // (JSON, with the form's CSRF value); the challenge is bound to this interaction.
  const passkeyBody = { type: 'object', properties: { csrf: { type: 'string' }, response: {} }, required: ['csrf'] } as const;
  type PasskeyRequest = FastifyRequest<{ Params: { uid: string }; Body: { csrf: string; response?: unknown } }>;

  /** The interaction, if it still asks for a sign-in; a clear 400 otherwise (signed in already, or gone). */
  async function loginInteraction(request: PasskeyRequest, reply: FastifyReply) {
    checkCsrf(request, request.body.csrf);
    const { interaction } = await details(request as unknown as UidRequest, reply);
    if (interaction.prompt.name !== 'login') throw new AppError('bad-request', 'this sign-in no longer asks for a passkey; reload the page');
    return interaction;
  }

  app.post(`${INTERACTION_PATH}/:uid/passkey/options`, { schema: { hide: true, params: uidParams, body: passkeyBody } }, async (req, reply) => {
    const interaction = await loginInteraction(req as PasskeyRequest, reply);
    return reply.type('application/json').send(await passkeys.authenticationOptions(interaction.uid));
  });

  app.post(`${INTERACTION_PATH}/:uid/passkey`, { schema: { hide: true, params: uidParams, body: passkeyBody } }, async (req, reply) => {
    const request = req as PasskeyRequest;
    const interaction = await loginInteraction(request, reply);
    const outcome = await signInWithPasskey(passkeys, throttle, { interaction: interaction.uid, response: request.body.response, address: request.ip });
    if ('waitSeconds' in outcome) {
      throw new AppError('rate-limited', `Too many attempts to sign in. Try again in ${outcome.waitSeconds} seconds.`, { 'retry-after': String(outcome.waitSeconds) });
    }
    const location = await provider.interactionResult(request.raw, reply.raw, { login: loginResult(outcome.account.userId) }, { mergeWithLastSubmission: false });
    return reply.type('application/json').send({ location });
  });

  app.post(`${INTERACTION_PATH}/:uid/confirm`, { schema: { hide: true, params: uidParams, body: formBody } }, async (req, reply) => {
    const request = req as UidRequest;
    checkCsrf(request, request.body.csrf);
    const { interaction } = await details(request, reply);
    if (interaction.prompt.name !== 'consent') return render(request, reply);
    if (request.body.decision !== 'approve') {
      return finish(request, reply, { error: 'access_denied', error_description: 'the account holder denied the request' }, false);
    }
    const accountId = interaction.session!.accountId;
    const clientId = String(interaction.params.client_id);
    const grant = (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined) ?? new provider.Grant({ accountId, clientId });
    const missing = interaction.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    return finish(request, reply, { consent: { grantId } }, true);
  });
}

/** The app's one step for signing in: on with the local issuer, off with an external one (AUTH_ISSUER). */
export async function registerSignIn(
  app: FastifyInstance,
  store: Store,
  config: Readonly<Config>,
  { families, verifier }: Pick<SignInPluginOptions, 'families' | 'verifier'>,
): Promise<void> {
  if (config.auth.mode !== 'local') return;
  await app.register(signInPlugin, {
    store,
    families,
    verifier,
    accounts: createAccountService(store),
    keyFile: config.auth.keyFile,
    issuer: config.publicBaseUrl,
    audience: config.auth.audience,
    ...config.signIn,
  });
}
