import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INVITATION_UNUSABLE, type InvitationService, type NewMember, type SignupPolicy } from '../accounts/invitations.js';
import { AccountRefused, type Account } from '../accounts/service.js';
import type { Throttle } from '../accounts/throttle.js';
import { SCOPES } from '../auth/scopes.js';
import type { App } from '../http/route-app.js';
import { AppError } from '../shared/errors.js';
import { authErrors, ErrorRef } from '../shared/schemas.js';
import { messagePage, newAccountPage, PAGE_CSP } from './pages.js';

export interface AccountPagesOptions {
  invitations: InvitationService;
  throttle: Throttle;
  signup: SignupPolicy;
  publicBaseUrl: string;
  cookieKeys: string[];
}

/** How long a form stays good after its page was shown. */
const FORM_TTL_MS = 3_600_000;

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
 * `SIGNUP=open`, `/signup`. The forms carry a token (an HMAC of the time the page was shown, good
 * for an hour), and a post the browser says comes from another site is refused.
 */
export async function accountPages(app: App, opts: AccountPagesOptions): Promise<void> {
  const { invitations, throttle, signup } = opts;
  const origin = new URL(opts.publicBaseUrl).origin;
  const key = Buffer.from(hkdfSync('sha256', opts.cookieKeys[0]!, 'cardshelf', 'account forms', 32));
  const mac = (purpose: string, issued: string): string => createHmac('sha256', key).update(`${purpose}:${issued}`).digest('base64url');
  const csrfFor = (purpose: string): string => {
    const issued = String(Date.now());
    return `${issued}.${mac(purpose, issued)}`;
  };
  const checkForm = (request: FastifyRequest, purpose: string, sent: string | undefined): void => {
    // The browser says where the post comes from: `Sec-Fetch-Site` (every current browser), or
    // `Origin` (which is "null" under the no-referrer policy the app sends, so only a real other
    // origin is refused by it).
    const site = request.headers['sec-fetch-site'];
    const sentOrigin = request.headers.origin;
    const otherSite = (site !== undefined && site !== 'same-origin' && site !== 'none') || (sentOrigin !== undefined && sentOrigin !== 'null' && sentOrigin !== origin);
    const [issued = '', given = ''] = (sent ?? '').split('.');
    const expected = Buffer.from(mac(purpose, issued));
    const fresh = Date.now() - Number(issued) < FORM_TTL_MS;
    const matches = given.length === expected.length && timingSafeEqual(Buffer.from(given), expected);
    if (otherSite || !fresh || !matches) {
      throw new AppError('forbidden', 'this form is out of date or was not sent from this site; open the page again');
    }
  };

  const html = (reply: FastifyReply, status: number, body: string): FastifyReply =>
    reply.code(status).header('content-security-policy', PAGE_CSP).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8192 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

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
