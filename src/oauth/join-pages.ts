import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INVITATION_UNUSABLE, type InvitationService, type NewMember, type SignupPolicy } from '../accounts/invitations.js';
import { SETUP_LINK_UNUSABLE, type SetupLinkService } from '../accounts/setup-link.js';
import { AccountRefused, EmailTaken, type Account } from '../accounts/service.js';
import type { Throttle } from '../accounts/throttle.js';
import type { App } from '../http/route-app.js';
import { acceptForms, createFormGuard, sendPage } from './form-guard.js';
import { messagePage, newAccountPage } from './pages.js';

export interface JoinPagesOptions {
  invitations: InvitationService;
  setupLinks: SetupLinkService;
  throttle: Throttle;
  signup: SignupPolicy;
  publicBaseUrl: string;
  cookieKeys: string[];
}

type Form = Record<string, string | undefined>;

/**
 * The pages where a person makes an account: an invitation's (`/invitation/<secret>`, made by
 * src/oauth/invitation-routes.ts), the first owner's set-up link (`/setup/<secret>`) and, with
 * `SIGNUP=open`, `/signup`. The forms carry a token and are refused from another site
 * (src/oauth/form-guard.ts).
 */
export async function joinPages(app: App, opts: JoinPagesOptions): Promise<void> {
  const { invitations, throttle, signup } = opts;
  const guard = createFormGuard(opts.publicBaseUrl, opts.cookieKeys);
  const csrfFor = (purpose: string): string => guard.tokenFor(purpose);
  const checkForm = (request: FastifyRequest, purpose: string, sent: string | undefined): void => guard.check(request, purpose, sent);

  const html = sendPage;

  acceptForms(app);

  // The web app's Family page: it asks the newcomer to sign in, then shows the family they joined.
  const openTheApp = { href: `${opts.publicBaseUrl.replace(/\/$/, '')}/app/family`, text: 'Open Cardshelf and sign in' };

  const memberFrom = (form: Form): NewMember => ({ email: form.email ?? '', displayName: form.name ?? '', password: form.password ?? '' });

  /**
   * The answer of the invitation and sign-up forms, whether the account was made or its email had
   * one already (EmailTaken): the form does not tell which emails have accounts.
   */
  const neutralAnswer = (reply: FastifyReply, email: string): FastifyReply =>
    html(
      reply,
      200,
      messagePage(
        'Thank you',
        `If ${email.trim()} had no account here, it has one now: sign in with that email and the password you just chose. If it had one already, nothing was changed: sign in with that account's own password (the server's operator can reset it).`,
        openTheApp,
      ),
    );

  /**
   * Makes the account from a posted form, throttled per address; answers the page to show:
   * `neutral` (invitations, sign-up), the same page whether or not the email had an account.
   */
  async function makeAccount(
    address: string,
    form: Form,
    reply: FastifyReply,
    make: (member: NewMember) => Promise<Account>,
    formAgain: (error: string) => string,
    neutral: boolean,
  ): Promise<FastifyReply> {
    const wait = await throttle.take([{ rule: 'signUp', subject: address }]);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return html(reply, 429, formAgain(`Too many accounts were made from here. Try again in ${wait} seconds.`));
    }
    try {
      const account = await make(memberFrom(form));
      if (neutral) return neutralAnswer(reply, account.email);
      return html(reply, 201, messagePage('Your account is ready', `Welcome, ${account.displayName}. Sign in with ${account.email} and your password.`, openTheApp));
    } catch (err) {
      if (!(err instanceof AccountRefused)) throw err;
      if (err instanceof EmailTaken && neutral) return neutralAnswer(reply, form.email ?? '');
      if (err.message === INVITATION_UNUSABLE) return html(reply, 400, messagePage('Invitation not usable', INVITATION_UNUSABLE));
      if (err.message === SETUP_LINK_UNUSABLE) return html(reply, 400, messagePage('Set-up link not usable', SETUP_LINK_UNUSABLE));
      return html(reply, 400, formAgain(`${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`));
    }
  }

  const secretParams = Type.Object({ secret: Type.String({ maxLength: 128 }) });
  const formBody = Type.Record(Type.String(), Type.String());
  const joinIntro = 'You are invited to join a family on Cardshelf. Make your account to share its library.';

  app.get('/invitation/:secret', { schema: { hide: true, params: secretParams } }, async (request, reply) => {
    if (signup === 'closed') return html(reply, 403, messagePage('Invitations are off', 'This server takes no new accounts. Ask its operator.'));
    if (!(await invitations.usable(request.params.secret))) return html(reply, 400, messagePage('Invitation not usable', INVITATION_UNUSABLE));
    return html(reply, 200, newAccountPage({ title: 'Join your family', intro: joinIntro, action: request.url, csrf: csrfFor('invitation') }));
  });

  app.post('/invitation/:secret', { schema: { hide: true, params: secretParams, body: formBody } }, async (request, reply) => {
    checkForm(request, 'invitation', request.body.csrf);
    if (signup === 'closed') return html(reply, 403, messagePage('Invitations are off', 'This server takes no new accounts. Ask its operator.'));
    const again = (error: string) =>
      newAccountPage({ title: 'Join your family', intro: joinIntro, action: request.url, csrf: csrfFor('invitation'), email: request.body.email, name: request.body.name, error });
    return makeAccount(request.ip, request.body, reply, (member) => invitations.accept(request.params.secret, member), again, true);
  });

  // The first owner's set-up link (src/accounts/setup-link.ts): whatever SIGNUP says, it is the operator's.
  const setupIntro = 'This Cardshelf server has no accounts yet. Make the first one: it owns the server, with a family of its own.';
  const setupForm = (action: string, form: Form = {}, error?: string): string =>
    newAccountPage({ title: 'Set up Cardshelf', intro: setupIntro, action, csrf: csrfFor('setup'), email: form.email, name: form.name, error });
  app.get('/setup/:secret', { schema: { hide: true, params: secretParams } }, async (request, reply) => {
    if (!(await opts.setupLinks.usable(request.params.secret))) return html(reply, 400, messagePage('Set-up link not usable', SETUP_LINK_UNUSABLE));
    return html(reply, 200, setupForm(request.url));
  });
  app.post('/setup/:secret', { schema: { hide: true, params: secretParams, body: formBody } }, async (request, reply) => {
    checkForm(request, 'setup', request.body.csrf);
    return makeAccount(request.ip, request.body, reply, (member) => opts.setupLinks.accept(request.params.secret, member), (error) => setupForm(request.url, request.body, error), false);
  });

  if (signup !== 'open') return;
  const signUpIntro = 'Make an account on this Cardshelf server. You get a family of your own.';
  app.get('/signup', { schema: { hide: true } }, async (_request, reply) =>
    html(reply, 200, newAccountPage({ title: 'Make an account', intro: signUpIntro, action: '/signup', csrf: csrfFor('signup') })),
  );
  app.post('/signup', { schema: { hide: true, body: formBody } }, async (request, reply) => {
    checkForm(request, 'signup', request.body.csrf);
    const again = (error: string) =>
      newAccountPage({ title: 'Make an account', intro: signUpIntro, action: '/signup', csrf: csrfFor('signup'), email: request.body.email, name: request.body.name, error });
    return makeAccount(request.ip, request.body, reply, (member) => invitations.signUp(member), again, true);
  });
}
