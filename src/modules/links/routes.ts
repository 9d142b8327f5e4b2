import { Type } from '@sinclair/typebox';
import { SCOPES } from '../../auth/scopes.js';
import type { App } from '../../http/route-app.js';
import { ErrorRef, StatusOk, authErrors } from '../../shared/schemas.js';
import { MAX_CARDS_A_JOB, MAX_LINKS_PER_USER, PUBLIC_SERVICE_PRESET } from './rules.js';
import { CreateLinkBody, JobAnswer, JobList, JobParams, LinkAnswer, LinkList, LinkParams, PullBody, PushBody } from './schemas.js';
import type { LinkService } from './service.js';

const BASE = '/user/links';
const tags = ['links'];
const remoteErrors = { ...authErrors, 404: ErrorRef, 502: ErrorRef };

/** Linked services (issue 34; docs/api.md "Linked services"): Cardshelf's own interface. */
export async function linkRoutes(app: App, opts: { links: LinkService }): Promise<void> {
  const { links } = opts;
  const auth = SCOPES.contentManage;

  app.get(`${BASE}/presets`, {
    config: { auth },
    schema: {
      tags,
      summary: "The public service's URLs, to start a link from",
      description: 'Its sign-in needs a client id registered with it by the user or the operator (its developer dashboard).',
      response: {
        200: Type.Object({
          presets: Type.Array(Type.Object({ name: Type.String(), apiBaseUrl: Type.String(), authBaseUrl: Type.String(), audience: Type.String() })),
        }),
        ...authErrors,
      },
    },
    handler: async () => ({ presets: [{ ...PUBLIC_SERVICE_PRESET }] }),
  });

  app.post(BASE, {
    config: { auth },
    schema: {
      tags,
      summary: 'Link an account on another service, with its own device sign-in',
      description: `Starts the remote's device flow (RFC 8628) and answers its code and link; the link is \`linked\` once the code is approved there, \`failed\` (with \`reason\`) if it is denied or expires. At most ${MAX_LINKS_PER_USER} links a member. A remote that does not answer: 502 \`remote-failed\`.`,
      body: CreateLinkBody,
      response: { 201: LinkAnswer, ...remoteErrors },
    },
    handler: async (req, reply) => reply.code(201).send({ link: await links.create(req.principal.userId, req.body) }),
  });

  app.post(`${BASE}/:linkId/sign-in`, {
    config: { auth },
    schema: {
      tags,
      summary: "Sign a link in again with the remote's device sign-in",
      description: 'For a link that failed (its sign-in refused or expired, or moved here from another instance) or to change accounts: answers the new code as `POST /user/links` does. The cards paired before stay paired.',
      params: LinkParams,
      response: { 200: LinkAnswer, ...remoteErrors },
    },
    handler: async (req) => ({ link: await links.signInAgain(req.principal.userId, req.params.linkId) }),
  });

  app.get(BASE, {
    config: { auth },
    schema: { tags, summary: 'Your links', response: { 200: LinkList, ...authErrors } },
    handler: async (req) => ({ links: await links.list(req.principal.userId) }),
  });

  app.get(`${BASE}/:linkId`, {
    config: { auth },
    schema: { tags, summary: 'One of your links', params: LinkParams, response: { 200: LinkAnswer, ...authErrors, 404: ErrorRef } },
    handler: async (req) => ({ link: await links.read(req.principal.userId, req.params.linkId) }),
  });

  app.delete(`${BASE}/:linkId`, {
    config: { auth },
    schema: {
      tags,
      summary: 'Unlink: the sign-in is revoked at the remote and forgotten here',
      description: 'Cards copied stay where they are, on both sides.',
      params: LinkParams,
      response: { 200: StatusOk, ...authErrors, 404: ErrorRef },
    },
    handler: async (req) => {
      await links.remove(req.principal.userId, req.params.linkId);
      return { status: 'ok' as const };
    },
  });

  app.post(`${BASE}/:linkId/pull`, {
    config: { auth },
    schema: {
      tags,
      summary: 'Bring cards home: copy remote cards here',
      description: `Every MYO card of the remote account, or the \`cardIds\` named (at most ${MAX_CARDS_A_JOB}). Answers the job at once; \`GET .../jobs/{jobId}\` and the live events follow it.`,
      params: LinkParams,
      body: Type.Optional(PullBody),
      response: { 202: JobAnswer, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) =>
      reply.code(202).send({ job: await links.startJob(req.principal.userId, req.params.linkId, 'pull', req.body ?? {}) }),
  });

  app.post(`${BASE}/:linkId/push`, {
    config: { auth },
    schema: {
      tags,
      summary: 'Send cards out: copy your cards to the remote',
      params: LinkParams,
      body: PushBody,
      response: { 202: JobAnswer, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) => reply.code(202).send({ job: await links.startJob(req.principal.userId, req.params.linkId, 'push', req.body) }),
  });

  app.get(`${BASE}/:linkId/jobs`, {
    config: { auth },
    schema: { tags, summary: "A link's jobs, newest first", params: LinkParams, response: { 200: JobList, ...authErrors, 404: ErrorRef } },
    handler: async (req) => ({ jobs: await links.listJobs(req.principal.userId, req.params.linkId) }),
  });

  app.get(`${BASE}/:linkId/jobs/:jobId`, {
    config: { auth },
    schema: { tags, summary: 'One job: its state, each card\'s outcome, files and bytes copied', params: JobParams, response: { 200: JobAnswer, ...authErrors, 404: ErrorRef } },
    handler: async (req) => ({ job: await links.readJob(req.principal.userId, req.params.linkId, req.params.jobId) }),
  });
}
