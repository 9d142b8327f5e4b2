import { Type } from '@sinclair/typebox';
import { SCOPES } from '../../auth/scopes.js';
import { sendTagged } from '../../http/conditional.js';
import type { RawJson } from '../../shared/raw-json.js';
import type { App } from '../../http/route-app.js';
import { isOn } from '../../shared/query-flags.js';
import { authErrors, ErrorRef, StatusOk } from '../../shared/schemas.js';
import { AdminFamilyEnvelope, AdminFamilyInput, FamilyEnvelope, FamilyQuery, MemberChange, MemberParams, NamedMemberEnvelope, NamedMemberList } from './schemas.js';
import type { FamilyService } from './service.js';

export async function familyRoutes(app: App, opts: { families: FamilyService }): Promise<void> {
  const { families } = opts;

  app.get('/user/family', {
    config: { auth: null, conditional: 'read' },
    schema: {
      tags: ['family'],
      summary: "The caller's family with its members and devices",
      description:
        'A user without a family gets an empty (stub) family on first need. A stub family (no members, no devices) answers `{"family": null}` unless `allowStub=true`.',
      querystring: FamilyQuery,
      response: { 200: FamilyEnvelope, ...authErrors },
    },
    handler: async (req, reply) => {
      const { userId } = req.principal;
      const opts = { showHistory: isOn(req.query.showhistory), allowStub: isOn(req.query.allowStub) };
      const { tag, render } = await families.read(userId, opts);
      // Serialised by this route's schema, as `send` would: the bytes can then be kept by their tag.
      return sendTagged(req, reply, tag, async () => reply.serializeInput({ family: await render() }, '200') as RawJson);
    },
  });

  app.get('/user/family/members', {
    config: { auth: SCOPES.libraryView },
    schema: {
      tags: ['family'],
      summary: "The caller's family's members, with their names",
      description:
        "The members `GET /user/family` lists, each with `displayName` (their account's name here; null for a member who signs in with another issuer) and `self` (the caller). Empty for a stub family.",
      response: { 200: NamedMemberList, ...authErrors },
    },
    handler: async (req) => ({ members: await families.members(req.principal.userId) }),
  });

  const memberErrors = { ...authErrors, 403: ErrorRef, 404: ErrorRef };
  app.patch('/user/family/members/:userId', {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags: ['family'],
      summary: 'Approve a member waiting for approval',
      description:
        'By an approved member of the same family (403 `forbidden` otherwise); not oneself (400). A member of another family, or none, is 404. Approving an approved member changes nothing.',
      params: MemberParams,
      body: MemberChange,
      response: { 200: NamedMemberEnvelope, ...memberErrors },
    },
    handler: async (req) => ({ member: await families.approve(req.principal.userId, req.params.userId) }),
  });

  app.delete('/user/family/members/:userId', {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags: ['family'],
      summary: 'Remove a member from the family',
      description:
        "By an approved member of the same family (403 `forbidden` otherwise); not oneself (400). A member of another family, or none, is 404. The member leaves: a stub family of their own on next need; their players' credentials and invitation links stop working.",
      params: MemberParams,
      response: { 200: StatusOk, ...memberErrors },
    },
    handler: async (req) => {
      await families.remove(req.principal.userId, req.params.userId);
      return { status: 'ok' as const };
    },
  });

  app.put('/admin/families/:familyId', {
    config: { auth: SCOPES.admin },
    schema: {
      tags: ['admin'],
      summary: 'Create or replace a family (members, devices, country, flags)',
      description: 'Listing a user as a member moves that user into this family; listing a device moves it too.',
      params: Type.Object({ familyId: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) }),
      body: AdminFamilyInput,
      response: { 200: AdminFamilyEnvelope, 201: AdminFamilyEnvelope, ...authErrors },
    },
    handler: async (req, reply) => {
      const { created, family } = await families.adminPut(req.params.familyId, req.body);
      return reply.code(created ? 201 : 200).send({ family });
    },
  });
}
