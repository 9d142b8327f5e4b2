import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createDeviceCookies } from '../accounts/device-cookies.js';
import { createAccountSessions, type AccountSession } from '../accounts/account-sessions.js';
import { signInWithPassword, WRONG_PASSWORD } from '../accounts/password-sign-in.js';
import type { PasskeyService } from '../accounts/passkeys.js';
import type { Account, AccountService } from '../accounts/service.js';
import type { Throttle } from '../accounts/throttle.js';
import type { Store } from '../db/dialect.js';
import type { App } from '../http/route-app.js';
import { AppError } from '../shared/errors.js';
import { accountSessionCookie } from './account-session.js';
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
  /** Ends the engine's session of the browser that sent `request` (provider.ts, endBrowserSignIn). */
  endBrowserSignIn: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

const PATHS = {
  page: '/account',
  signIn: '/account/sign-in',
  signOut: '/account/sign-out',
  confirm: '/account/confirm',
  revoke: '/account/apps/revoke',
  passkeyOptions: '/account/passkeys/options',
  passkeyAdd: '/account/passkeys',
  passkeyRemove: '/account/passkeys/remove',
} as const;
/** The notices the page shows when sent back to it after a script's step (`?notice=`). */
const NOTICES: Record<string, string> = { 'passkey-added': 'Your passkey was added: you can sign in with it.' };
const PURPOSE = 'account';
/** The sign-in form's purpose: shown without a session, so its token is bound to none. */
const SIGN_IN_PURPOSE = 'account-sign-in';
const STALE = 'enter your password again on the account page before adding or removing a passkey';
type Form = Record<string, string | undefined>;

/**
 * The account page (`/account`): the apps signed in to the account, each with a button that
 * signs it out at once (src/oauth/grants.ts). It has its own sign-in (email and password,
 * throttled as every password form: src/accounts/password-sign-in.ts) and session, kept on the
 * server (src/accounts/account-sessions.ts); its forms are guarded as every form of the pages
 * (src/oauth/form-guard.ts), with tokens bound to the session. It lists the account's passkeys,
 * removes them, and adds one (src/accounts/passkeys.ts): the page script asks for options and
 * sends the browser's answer, both JSON posts carrying the page's CSRF value. Changing passkeys
 * needs the password entered within the last few minutes (FRESH_CONFIRMATION_MS).
 */
export async function accountPage(app: App, opts: AccountPageOptions): Promise<void> {
  const { store, accounts, throttle, passkeys } = opts;
  const guard = createFormGuard(opts.publicBaseUrl, opts.cookieKeys);
  const secure = opts.publicBaseUrl.startsWith('https:');
  const sessions = createAccountSessions(store);
  const cookie = accountSessionCookie(sessions, { secure });
  const devices = createDeviceCookies(opts.cookieKeys);
  acceptForms(app);

  interface SignedIn {
    account: Account;
    session: AccountSession;
  }

  /** The signed-in account and its session, if the account may still sign in (a disabled one is signed out). */
  async function signedIn(request: FastifyRequest): Promise<SignedIn | undefined> {
    const session = await cookie.current(request);
    const account = session && (await accounts.active(session.userId));
    return account && session ? { account, session } : undefined;
  }

  /**
   * The session's own form, checked: a token of another session, or none, is a 403. Signed out,
   * undefined (the caller answers 401 and does nothing, so there is nothing to forge).
   */
  async function signedInForm(request: FastifyRequest, sent: string | undefined): Promise<SignedIn | undefined> {
    const found = await signedIn(request);
    if (found) guard.check(request, PURPOSE, sent, found.session.id);
    return found;
  }

  const signInForm = (reply: FastifyReply, status: number, error?: string, email?: string): FastifyReply =>
    sendPage(reply, status, accountSignInPage({ action: PATHS.signIn, csrf: guard.tokenFor(SIGN_IN_PURPOSE), error, email }));

  async function appsPage(reply: FastifyReply, { account, session }: SignedIn, status = 200, notice?: string): Promise<FastifyReply> {
    const apps = await signedInApps(store, account.userId);
    const csrf = guard.tokenFor(PURPOSE, session.id);
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
        confirmAction: session.confirmed ? undefined : PATHS.confirm,
      }),
    );
  }

  const formBody = Type.Record(Type.String(), Type.String());
  const seeOther = (reply: FastifyReply, setCookie?: string): FastifyReply => {
    if (setCookie) reply.header('set-cookie', setCookie);
    return reply.code(303).header('location', PATHS.page).header('cache-control', 'no-store').send();
  };

  app.get(PATHS.page, { schema: { hide: true } }, async (request, reply) => {
    const found = await signedIn(request);
    const notice = NOTICES[String((request.query as Record<string, unknown>).notice)];
    return found ? appsPage(reply, found, 200, notice) : signInForm(reply, 200);
  });

  app.post(PATHS.signIn, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    const form = request.body as Form;
    guard.check(request, SIGN_IN_PURPOSE, form.csrf);
    const email = form.email ?? '';
    const outcome = await signInWithPassword(accounts, throttle, devices, { email, password: form.password ?? '', address: request.ip, device: deviceCookieOf(request) });
    if ('waitSeconds' in outcome) {
      reply.header('retry-after', String(outcome.waitSeconds));
      return signInForm(reply, 429, `Too many attempts to sign in. Try again in ${outcome.waitSeconds} seconds.`, email);
    }
    if ('wrong' in outcome) return signInForm(reply, 401, WRONG_PASSWORD, email);
    reply.header('set-cookie', deviceCookieHeader(outcome.deviceCookie, secure));
    return seeOther(reply, await cookie.signIn(outcome.account.userId));
  });

  // Signing out ends this page's session and the browser's sign-in to the pages (the engine's).
  app.post(PATHS.signOut, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    // Signed out of the page already, the engine's session still ends: a post from another site
    // carries neither cookie (SameSite=Lax), so it can end nothing.
    const found = await signedInForm(request, (request.body as Form).csrf);
    const cleared = await cookie.signOut(found?.session);
    await opts.endBrowserSignIn(request, reply);
    return seeOther(reply, cleared);
  });

  // The password again, in a session that has one too old for a credential change.
  app.post(PATHS.confirm, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    const form = request.body as Form;
    const found = await signedInForm(request, form.csrf);
    if (!found) return signInForm(reply, 401, 'Sign in again to change your passkeys.');
    const outcome = await signInWithPassword(accounts, throttle, devices, { email: found.account.email, password: form.password ?? '', address: request.ip, device: deviceCookieOf(request) });
    if ('waitSeconds' in outcome) {
      reply.header('retry-after', String(outcome.waitSeconds));
      return appsPage(reply, found, 429, `Too many attempts. Try again in ${outcome.waitSeconds} seconds.`);
    }
    if ('wrong' in outcome || outcome.account.userId !== found.account.userId) return appsPage(reply, found, 401, 'That password is not right.');
    await sessions.confirm(found.session.id);
    return appsPage(reply, { ...found, session: { ...found.session, confirmed: true } }, 200, 'Thank you: you can add or remove passkeys for the next few minutes.');
  });

  app.post(PATHS.revoke, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    const form = request.body as Form;
    const found = await signedInForm(request, form.csrf);
    if (!found) return signInForm(reply, 401, 'Sign in again to sign out an app.');
    const revoked = await revokeSignedInApp(store, found.account.userId, form.grant ?? '');
    return appsPage(reply, found, revoked ? 200 : 404, revoked ? 'The app is signed out: it must sign in again.' : 'That app is not signed in to your account.');
  });

  /** The signed-in account for a script's JSON post, checked as a form; 401 when signed out, 403 without a fresh password. */
  async function scriptCaller(request: FastifyRequest): Promise<Account> {
    const found = await signedInForm(request, (request.body as { csrf?: string }).csrf);
    if (!found) throw new AppError('unauthorized', 'sign in to the account page again to add a passkey');
    if (!found.session.confirmed) throw new AppError('forbidden', STALE);
    return found.account;
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
    const found = await signedInForm(request, form.csrf);
    if (!found) return signInForm(reply, 401, 'Sign in again to remove a passkey.');
    if (!found.session.confirmed) return appsPage(reply, found, 403, 'Enter your password again before removing a passkey.');
    const removed = await passkeys.remove(found.account.userId, form.id ?? '');
    return appsPage(reply, found, removed ? 200 : 404, removed ? 'The passkey is removed: it no longer signs you in.' : 'You have no such passkey.');
  });
}
