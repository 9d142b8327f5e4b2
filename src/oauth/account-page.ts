import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { signInWithPassword, WRONG_PASSWORD } from '../accounts/password-sign-in.js';
import type { Account, AccountService } from '../accounts/service.js';
import type { Throttle } from '../accounts/throttle.js';
import type { Store } from '../db/dialect.js';
import type { App } from '../http/route-app.js';
import { createAccountSession } from './account-session.js';
import { acceptForms, createFormGuard, sendPage } from './form-guard.js';
import { revokeSignedInApp, signedInApps } from './grants.js';
import { accountSignInPage, signedInAppsPage } from './pages.js';

export interface AccountPageOptions {
  store: Store;
  accounts: AccountService;
  throttle: Throttle;
  publicBaseUrl: string;
  cookieKeys: string[];
}

const PATHS = { page: '/account', signIn: '/account/sign-in', signOut: '/account/sign-out', revoke: '/account/apps/revoke' } as const;
const PURPOSE = 'account';
type Form = Record<string, string | undefined>;

/**
 * The account page (`/account`): the apps signed in to the account, each with a button that
 * signs it out at once (src/oauth/grants.ts). It has its own sign-in (email and password,
 * throttled as every password form: src/accounts/password-sign-in.ts) and session
 * (src/oauth/account-session.ts); its forms are guarded as the other account forms
 * (src/oauth/form-guard.ts).
 */
export async function accountPage(app: App, opts: AccountPageOptions): Promise<void> {
  const { store, accounts, throttle } = opts;
  const guard = createFormGuard(opts.publicBaseUrl, opts.cookieKeys);
  const session = createAccountSession({ cookieKeys: opts.cookieKeys, secure: opts.publicBaseUrl.startsWith('https:') });
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
    return sendPage(
      reply,
      status,
      signedInAppsPage({
        accountName: account.displayName,
        email: account.email,
        apps: apps.map((a) => ({ ...a, unverified: a.name === undefined, since: new Date(a.since * 1000).toUTCString() })),
        revokeAction: PATHS.revoke,
        signOutAction: PATHS.signOut,
        csrf: guard.tokenFor(PURPOSE),
        notice,
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
    return account ? appsPage(reply, account) : signInForm(reply, 200);
  });

  app.post(PATHS.signIn, { schema: { hide: true, body: formBody } }, async (request, reply) => {
    const form = request.body as Form;
    guard.check(request, PURPOSE, form.csrf);
    const email = form.email ?? '';
    const outcome = await signInWithPassword(accounts, throttle, { email, password: form.password ?? '', address: request.ip });
    if ('waitSeconds' in outcome) {
      reply.header('retry-after', String(outcome.waitSeconds));
      return signInForm(reply, 429, `Too many attempts to sign in. Try again in ${outcome.waitSeconds} seconds.`, email);
    }
    if ('wrong' in outcome) return signInForm(reply, 401, WRONG_PASSWORD, email);
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
}
