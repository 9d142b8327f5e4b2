import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INVITATION_TTL_MS, INVITATION_UNUSABLE, InvitationLimit, type InvitationService, type NewMember, type SignupPolicy } from '../accounts/invitations.js';
import { SETUP_LINK_UNUSABLE, type SetupLinkService } from '../accounts/setup-link.js';
import { AccountRefused, EmailTaken, type Account } from '../accounts/service.js';
import type { Throttle } from '../accounts/throttle.js';
import { SCOPES } from '../auth/scopes.js';
import type { App } from '../http/route-app.js';
import { AppError } from '../shared/errors.js';
import { authErrors, ErrorRef, StatusOk, Timestamp } from '../shared/schemas.js';
import { acceptForms, createFormGuard, sendPage } from './form-guard.js';
import { messagePage, newAccountPage } from './pages.js';

export interface AccountPagesOptions {
  invitations: InvitationService;
  setupLinks: SetupLinkService;
  throttle: Throttle;
  signup: SignupPolicy;
  /** `INVITATIONS_PER_MEMBER`: open invitations one member may have (only shown here; the service holds it). */
  invitationsPerMember: number;
  publicBaseUrl: string;
  cookieKeys: string[];
}

const InvitationId = Type.String({ description: "The invitation's id: a SHA-256 of its link's secret (never the link)." });
const InvitationEnvelope = Type.Object({
  invitation: Type.Object({
    url: Type.String({ description: 'The link to hand to the person invited; good once, for 7 days.' }),
    id: InvitationId,
    familyId: Type.String(),
    expiresAt: Type.String({ format: 'date-time' }),
  }),
});
const OpenInvitationList = Type.Object({
  invitations: Type.Array(
    Type.Object({
      id: InvitationId,
      invitedBy: Type.String({ description: 'The user id of the member who made it.' }),
      createdAt: Timestamp,
      expiresAt: Timestamp,
    }),
  ),
});

type Form = Record<string, string | undefined>;

/**
 * Invitations (`POST /user/invitations` makes a link, `GET` lists the family's open ones,
 * `DELETE /user/invitations/<id>` revokes one, `/invitation/<secret>` takes it) and, with
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
        `If ${email.trim()} had no account here, it has one now: sign in from your app with that email and the password you just chose. If it had one already, nothing was changed: sign in with that account's own password (the server's operator can reset it).`,
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
      return html(reply, 201, messagePage('Your account is ready', `Welcome, ${account.displayName}. Sign in from your app with ${account.email} and your password.`));
    } catch (err) {
      if (!(err instanceof AccountRefused)) throw err;
      if (err instanceof EmailTaken && neutral) return neutralAnswer(reply, form.email ?? '');
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
        description: `Good once, for ${INVITATION_TTL_MS / 86_400_000} days, while the caller is in the family; only a hash of it is kept. The caller gets a (stub) family first if they have none. At most ${opts.invitationsPerMember} open invitations a member (\`INVITATIONS_PER_MEMBER\`): one more is 400 \`invitation-limit\`. 403 \`forbidden\` when the server takes no new accounts (\`SIGNUP=closed\`).`,
        response: { 201: InvitationEnvelope, ...authErrors, 403: ErrorRef },
      },
    },
    async (request, reply) => {
      if (signup === 'closed') throw new AppError('forbidden', 'this server takes no new accounts (SIGNUP=closed); the operator adds them');
      let made;
      try {
        made = await invitations.create(request.principal.userId);
      } catch (err) {
        if (err instanceof InvitationLimit) throw new AppError('invitation-limit', err.message);
        throw err;
      }
      const url = `${opts.publicBaseUrl.replace(/\/$/, '')}/invitation/${made.secret}`;
      return reply.code(201).send({ invitation: { url, id: made.id, familyId: made.familyId, expiresAt: made.expiresAt } });
    },
  );

  app.get(
    '/user/invitations',
    {
      config: { auth: SCOPES.libraryManage },
      schema: {
        tags: ['family'],
        summary: "The open invitations of the caller's family",
        description: 'Made by any member, neither used nor expired, the soonest to expire first; their links are not kept, so not shown. Empty when the caller has no family.',
        response: { 200: OpenInvitationList, ...authErrors },
      },
    },
    async (request) => ({ invitations: await invitations.listOpen(request.principal.userId) }),
  );

  app.delete(
    '/user/invitations/:id',
    {
      config: { auth: SCOPES.libraryManage },
      schema: {
        tags: ['family'],
        summary: "Revokes an open invitation of the caller's family",
        description: 'Any member may revoke any open invitation of the family: its link stops working at once. 404 `not-found` when the family has no such open invitation (used, expired, revoked, or another family\'s).',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: StatusOk, ...authErrors, 404: ErrorRef },
      },
    },
    async (request) => {
      if (!(await invitations.revoke(request.principal.userId, request.params.id))) throw new AppError('not-found', 'your family has no such open invitation');
      return { status: 'ok' as const };
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
