import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INVITATION_UNUSABLE, type InvitationService, type NewMember, type SignupPolicy } from '../accounts/invitations.js';
import { SETUP_LINK_UNUSABLE, type SetupLinkService } from '../accounts/setup-link.js';
import { AccountRefused, type Account } from '../accounts/service.js';
import type { Throttle } from '../accounts/throttle.js';
import { SCOPES } from '../auth/scopes.js';
import type { App } from '../http/route-app.js';
import { AppError } from '../shared/errors.js';
import { authErrors, ErrorRef } from '../shared/schemas.js';
import { acceptForms, createFormGuard, sendPage } from './form-guard.js';
import { messagePage, newAccountPage } from './pages.js';

export interface AccountPagesOptions {
  invitations: InvitationService;
  setupLinks: SetupLinkService;
  throttle: Throttle;
  signup: SignupPolicy;
  publicBaseUrl: string;
  cookieKeys: string[];
}

const InvitationEnvelope = Type.Object({
  invitation: Type.Object({
    url: Type.String({ description: 'The link to hand to the person invited; good once, for 7 days.' }),
    familyId: Type.String(),
    expiresAt: Type.String({ format: 'date-time' }),
  }),
});

type Form = Record<string, string | undefined>;

/**
 * Invitations (`POST /user/invitations` makes a link, `/invitation/<secret>` takes it) and, with
 * `SIGNUP=open`, `/signup`. The forms carry a token and are refused from another site
 * (src/oauth/form-guard.ts).
 */
export async function accountPages(app: App, opts: AccountPagesOptions): Promise<void> {
  const { invitations, throttle, signup } = opts;
  const guard = createFormGuard(opts.publicBaseUrl, opts.cookieKeys);
  const csrfFor = (purpose: string): string => guard.tokenFor(purpose);
  const checkForm = (request: FastifyRequest, purpose: string, sent: string | undefined): void => guard.check(request, purpose, sent);

  const html = sendPage;

  acceptForms(app);

  const memberFrom = (form: Form): NewMember => ({ email: form.email ?? '', displayName: form.name ?? '', password: form.password ?? '' });

  /** Makes the account from a posted form, throttled per address; answers the page to show. */
  async function makeAccount(
    address: string,
    form: Form,
    reply: FastifyReply,
    make: (member: NewMember) => Promise<Account>,
    formAgain: (error: string) => string,
  ): Promise<FastifyReply> {
    const wait = await throttle.take([{ rule: 'signUp', subject: address }]);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return html(reply, 429, formAgain(`Too many accounts were made from here. Try again in ${wait} seconds.`));
    }
    try {
      const account = await make(memberFrom(form));
      return html(reply, 201, messagePage('Your account is ready', `Welcome, ${account.displayName}. Sign in from your app with ${account.email} and your password.`));
    } catch (err) {
      if (!(err instanceof AccountRefused)) throw err;
      if (err.message === INVITATION_UNUSABLE) return html(reply, 400, messagePage('Invitation not usable', INVITATION_UNUSABLE));
      if (err.message === SETUP_LINK_UNUSABLE) return html(reply, 400, messagePage('Set-up link not usable', SETUP_LINK_UNUSABLE));
      return html(reply, 400, formAgain(`${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`));
    }
  }

  app.post(
    '/user/invitations',
    {
      config: { auth: SCOPES.libraryManage },
      schema: {
        tags: ['family'],
        summary: "A link that lets one person make an account and join the caller's family",
        description:
          'Good once, for 7 days; only a hash of it is kept. The caller gets a (stub) family first if they have none. 403 `forbidden` when the server takes no new accounts (`SIGNUP=closed`).',
        response: { 201: InvitationEnvelope, ...authErrors, 403: ErrorRef },
      },
    },
    async (request, reply) => {
      if (signup === 'closed') throw new AppError('forbidden', 'this server takes no new accounts (SIGNUP=closed); the operator adds them');
      const made = await invitations.create(request.principal.userId);
      const url = `${opts.publicBaseUrl.replace(/\/$/, '')}/invitation/${made.secret}`;
      return reply.code(201).send({ invitation: { url, familyId: made.familyId, expiresAt: made.expiresAt } });
    },
  );

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
    return makeAccount(request.ip, request.body, reply, (member) => invitations.accept(request.params.secret, member), again);
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
    return makeAccount(request.ip, request.body, reply, (member) => opts.setupLinks.accept(request.params.secret, member), (error) => setupForm(request.url, request.body, error));
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
    return makeAccount(request.ip, request.body, reply, (member) => invitations.signUp(member), again);
  });
}
