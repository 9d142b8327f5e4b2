import { Type } from '@sinclair/typebox';
import { INVITATION_TTL_MS, InvitationLimit, type InvitationService, type SignupPolicy } from '../accounts/invitations.js';
import { SCOPES } from '../auth/scopes.js';
import type { App } from '../http/route-app.js';
import { AppError } from '../shared/errors.js';
import { authErrors, ErrorRef, StatusOk, Timestamp } from '../shared/schemas.js';

export interface InvitationRoutesOptions {
  invitations: InvitationService;
  signup: SignupPolicy;
  /** `INVITATIONS_PER_MEMBER`: open invitations one member may have (only shown here; the service holds it). */
  invitationsPerMember: number;
  publicBaseUrl: string;
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

/**
 * A family's invitations, in the API: `POST /user/invitations` makes a link, `GET` lists the
 * family's open ones, `DELETE /user/invitations/<id>` revokes one. The link's page, where the
 * person invited makes an account, is src/oauth/join-pages.ts's.
 */
export async function invitationRoutes(app: App, opts: InvitationRoutesOptions): Promise<void> {
  const { invitations, signup } = opts;

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
}
