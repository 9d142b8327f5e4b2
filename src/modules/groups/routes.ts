import { SCOPES } from '../../auth/scopes.js';
import { ifMatchOf, sendTagged } from '../../http/conditional.js';
import { answerWithWrite } from '../../http/idempotency.js';
import { sendRaw, type App } from '../../http/route-app.js';
import { ErrorRef, authErrors } from '../../shared/schemas.js';
import {
  CreateGroupBody,
  DeletedGroup,
  Group,
  GroupList,
  GroupParams,
  UpdateGroupBody,
} from './schemas.js';
import { MAX_GROUP_NAME_LENGTH, MAX_GROUPS_PER_FAMILY } from './rules.js';
import type { GroupService, TaggedGroup } from './service.js';

const GroupRef = { $ref: 'Group' } as unknown as typeof Group;
const BASE = '/card/family/library/groups';

export async function groupRoutes(app: App, opts: { groups: GroupService }): Promise<void> {
  const { groups } = opts;
  const tags = ['groups'];

  app.post(BASE, {
    config: { auth: SCOPES.libraryManage, idempotent: true },
    schema: {
      tags,
      summary: 'Create a group in the family library',
      description: `At most ${MAX_GROUPS_PER_FAMILY} groups a family (400 \`group-limit\`). \`name\` is cut to ${MAX_GROUP_NAME_LENGTH} characters; items keep their order, lose duplicates, and drop cards not in the family library.`,
      body: CreateGroupBody,
      response: { 201: GroupRef, ...authErrors },
    },
    handler: async (req, reply) => {
      const { result, answer } = await answerWithWrite(
        req,
        (alsoCommit) => groups.create(req.principal.userId, req.body, alsoCommit),
        ({ group }: TaggedGroup) => ({ status: 201, body: group }),
      );
      return sendRaw(reply.header('etag', result.tag), answer.status, answer.body);
    },
  });

  app.get(BASE, {
    config: { auth: SCOPES.libraryView, conditional: 'read' },
    schema: { tags, summary: "The family's groups", response: { 200: GroupList, ...authErrors } },
    handler: async (req, reply) => {
      const { userId } = req.principal;
      const { tag, render } = await groups.listRead(userId);
      return sendTagged(req, reply, tag, render);
    },
  });

  app.get(`${BASE}/:groupId`, {
    config: { auth: SCOPES.libraryView, conditional: 'read' },
    schema: {
      tags,
      summary: 'One group, with the full cards of its items',
      params: GroupParams,
      response: { 200: GroupRef, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) => {
      const { userId } = req.principal;
      const { groupId } = req.params;
      const { tag, render } = await groups.read(userId, groupId);
      return sendTagged(req, reply, tag, render);
    },
  });

  app.put(`${BASE}/:groupId`, {
    config: { auth: SCOPES.libraryManage, conditional: 'write' },
    schema: {
      tags,
      summary: 'Update a group; fields left out keep their values',
      description: "Another family's group answers like a missing one: 404.",
      params: GroupParams,
      body: UpdateGroupBody,
      response: { 200: GroupRef, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) => {
      const { group, tag } = await groups.update(req.principal.userId, req.params.groupId, req.body, ifMatchOf(req));
      return sendRaw(reply.header('etag', tag), 200, group);
    },
  });

  app.delete(`${BASE}/:groupId`, {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags,
      summary: 'Delete a group (hard delete)',
      params: GroupParams,
      response: { 200: DeletedGroup, ...authErrors, 404: ErrorRef },
    },
    handler: async (req) => groups.remove(req.principal.userId, req.params.groupId),
  });
}
