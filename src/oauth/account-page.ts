import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createDeviceCookies } from '../accounts/device-cookies.js';
import { signInWithPassword, WRONG_PASSWORD } from '../accounts/password-sign-in.js';
import type { PasskeyService } from '../accounts/passkeys.js';
import type { Account, AccountService } from '../accounts/service.js';
import type { Throttle } from '../accounts/throttle.js';
import type { Store } from '../db/dialect.js';
import type { App } from '../http/route-app.js';
import { AppError } from '../shared/errors.js';
import { createAccountSession } from './account-session.js';
import { deviceCookieHeader, deviceCookieOf } from './device-cookie.js';
import { acceptForms, createFormGuard, sendPage } from './form-guard.js';
import { revokeSignedInApp, signedInApps } from './grants.js';
import { accountSignInPage, signedInAppsPage } from './pages.js';

export interface AccountPageOptions {
  store: Store;
  accounts: AccountService;
  throttle: Throttle;
  publicBaseUrl: string;
  cookieKeys: string[];
  passkeys: PasskeyService;
}

const PATHS = {
  page: '/account',
  signIn: '/account/sign-in',
  signOut: '/account/sign-out',
  revoke: '/account/apps/revoke',
  passkeyOptions: '/account/passkeys/options',
  passkeyAdd: '/account/passkeys',
  passkeyRemove: '/account/passkeys/remove',
} as const;
/** The notices the page shows when sent back to it after a script's step (`?notice=`). */
const NOTICES: Record<string, string> = { 'passkey-added': 'Your passkey was added: you can sign in with it.' };
const PURPOSE = 'account';
type Form = Record<string, string | undefined>;

/**
 * The account page (`/account`): the apps signed in to the account, each with a button that
 * signs it out at once (src/oauth/grants.ts). It has its own sign-in (email and password,
 * throttled as every password form: src/accounts/password-sign-in.ts) and session
 * (src/oauth/account-session.ts); its forms are guarded as the other account forms
 * (src/oauth/form-guard.ts). It lists the account's passkeys, removes them, and adds one
 * (src/accounts/passkeys.ts): the page script asks for options and sends the browser's answer,
 * both JSON posts carrying the page's CSRF value.
 */
export async function accountPage(app: App, opts: AccountPageOptions): Promise<void> {
  const { store, accounts, throttle, passkeys } = opts;
  const guard = createFormGuard(opts.publicBaseUrl, opts.cookieKeys);
  const secure = opts.publicBaseUrl.startsWith('https:');
  const session = createAccountSession({ cookieKeys: opts.cookieKeys, secure });
  const devices = createDeviceCookies(opts.cookieKeys);
  acceptForms(app);

  /** The signed-in account, if it may still sign in (a disabled one is signed out). */
  async function signedIn(request: FastifyRequest): Promise<Account | undefined> {
    const userId = session.userId(request);
    return userId === undefined ? undefined : accounts.active(userId);
  }

  const signInForm = (reply: FastifyReply, status: number, error?: string, email?: string): FastifyReply =>
    sendPage(reply, status, accountSignInPage({ action: PATHS.signIn, csrf: guard.tokenFor(PURPOSE), error, email }));

  async function appsPage(reply: FastifyReply, account: Account, status = 200, notice?: string): Promise<FastifyReply> {
    const apps = await signedInApps(store, account.userId);
    const csrf = guard.tokenFor(PURPOSE);
    const when = (iso: string): string => new Date(iso).toUTCString();
    return sendPage(
      reply,
      status,
      signedInAppsPage({
        accountName: account.displayName,
        email: account.email,
        apps: apps.map((a) => ({ ...a, unverified: a.name === undefined, since: new Date(a.since * 1000).toUTCString() })),
        revokeAction: PATHS.revoke,
        signOutAction: PATHS.signOut,
        csrf,
        notice,
        passkeys: (await passkeys.list(account.userId)).map((p) => ({ id: p.id, name: p.name, added: when(p.createdAt), lastUsed: p.lastUsedAt && when(p.lastUsedAt) })),
        removePasskeyAction: PATHS.passkeyRemove,
        addPasskey: passkeys.available ? { options: PATHS.passkeyOptions, verify: PATHS.passkeyAdd, csrf } : undefined,
      }),
    );
  }

  const formBody = Type.Record(Type.String(), Type.String());
  const seeOther = (reply: FastifyReply, cookie?: string): FastifyReply => {
    if (cookie) reply.header('set-cookie', cookie);
    return reply.code(303).header('location', PATHS.page).header('cache-control', 'no-store').send();
  };

  app.get(PATHS.page, { schema: { hide: true } }, async (request, reply) => {
    const account = await signedIn(request);
    const notice = NOTICES[String((request.query as Record<string, unknown>).notice)];
    return account ? appsPage(reply, account, 200, notice) : signInForm(reply, 200);
  });

  app.post(PATHS.signIn, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    const form = request.body as Form;
    guard.check(request, PURPOSE, form.csrf);
    const email = form.email ?? '';
    const outcome = await signInWithPassword(accounts, throttle, devices, { email, password: form.password ?? '', address: request.ip, device: deviceCookieOf(request) });
    if ('waitSeconds' in outcome) {
      reply.header('retry-after', String(outcome.waitSeconds));
      return signInForm(reply, 429, `Too many attempts to sign in. Try again in ${outcome.waitSeconds} seconds.`, email);
    }
    if ('wrong' in outcome) return signInForm(reply, 401, WRONG_PASSWORD, email);
    reply.header('set-cookie', deviceCookieHeader(outcome.deviceCookie, secure));
    return seeOther(reply, session.signIn(outcome.account.userId));
  });

  app.post(PATHS.signOut, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    guard.check(request, PURPOSE, (request.body as Form).csrf);
    return seeOther(reply, session.signOut());
  });

  app.post(PATHS.revoke, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    const form = request.body as Form;
    guard.check(request, PURPOSE, form.csrf);
    const account = await signedIn(request);
    if (!account) return signInForm(reply, 401, 'Sign in again to sign out an app.');
    const revoked = await revokeSignedInApp(store, account.userId, form.grant ?? '');
    return appsPage(reply, account, revoked ? 200 : 404, revoked ? 'The app is signed out: it must sign in again.' : 'That app is not signed in to your account.');
  });
  /** The signed-in account for a script's JSON post, checked as a form; 401 when signed out. */
  async function scriptCaller(request: FastifyRequest): Promise<Account> {
    guard.check(request, PURPOSE, (request.body as { csrf?: string }).csrf);
    const account = await signedIn(request);
    if (!account) throw new AppError('unauthorized', 'sign in to the account page again to add a passkey');
    return account;
  }

  app.post(PATHS.passkeyOptions, { schema: { hide: true, body: Type.Object({ csrf: Type.String() }) } }, async (request, reply) => {
    const account = await scriptCaller(request);
    return reply.header('cache-control', 'no-store').send(await passkeys.registrationOptions(account));
  });

  const passkeyAnswer = Type.Object({ csrf: Type.String(), name: Type.Optional(Type.String({ maxLength: 1000 })), response: Type.Unknown() });
  app.post(PATHS.passkeyAdd, { schema: { hide: true, body: passkeyAnswer } }, async (request, reply) => {
    const account = await scriptCaller(request);
    const body = request.body as { name?: string; response: unknown };
    const passkey = await passkeys.register(account, body.response, body.name ?? '');
    return reply.code(201).header('cache-control', 'no-store').send({ passkey, location: `${PATHS.page}?notice=passkey-added` });
  });

  app.post(PATHS.passkeyRemove, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    const form = request.body as Form;
    guard.check(request, PURPOSE, form.csrf);
    const account = await signedIn(request);
    if (!account) return signInForm(reply, 401, 'Sign in again to remove a passkey.');
    const removed = await passkeys.remove(account.userId, form.id ?? '');
    return appsPage(reply, account, removed ? 200 : 404, removed ? 'The passkey is removed: it no longer signs you in.' : 'You have no such passkey.');
  });
}
