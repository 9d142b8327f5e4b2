import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Readable } from 'node:stream';
import { SCOPES } from '../auth/scopes.js';
import { notFound } from '../shared/errors.js';
import type { App } from '../http/route-app.js';
import { ErrorRef, authErrors } from '../shared/schemas.js';
import type { TransferService } from './service.js';

/** A streamed archive (src/transfer/archive-format.ts); the OpenAPI document names its type. */
const ARCHIVE = {
  200: {
    description:
      'The archive, streamed: a gzipped tar of `cardshelf-archive.json` (format and version), the media files (`media/<sha256>`), the rows (`tables/...ndjson`) and `manifest.json` (every entry\'s size and SHA-256). `cardshelf import` loads it.',
    content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
  },
};

function sendArchive(reply: FastifyReply, archive: Readable, filename: string): FastifyReply {
  return reply
    .code(200)
    .type('application/gzip')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .send(archive);
}

export async function transferRoutes(app: App, opts: { transfer: TransferService }): Promise<void> {
  const { transfer } = opts;

  app.get('/user/family/export', {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags: ['family'],
      summary: "The caller's family, to take along: one archive",
      description:
        "What the caller may read of their family: the family, its members, players and history, library records, groups and images, the members' live MYO cards, and the caller's own cards, wishlists, icons, uploads and media holdings (never another member's), with the media these rows name that the caller may read, as files in the archive. A user without a family gets their stub family's.",
      response: { ...ARCHIVE, ...authErrors },
    },
    handler: async (req, reply) => {
      const { familyId, archive } = await transfer.callerFamilyArchive(req.principal.userId);
      return sendArchive(reply, archive, `cardshelf-family-${familyId}.tar.gz`);
    },
  });

  app.get('/admin/export', {
    config: { auth: SCOPES.admin },
    schema: {
      tags: ['admin'],
      summary: 'The whole instance, or one family, as one archive',
      description:
        "Without `familyId`, everything: what `cardshelf export` writes. With it, the family with every member's rows (their cards, deleted ones included, wishlists, icons, uploads and holdings) and the media these rows name that the family's members may read.",
      querystring: Type.Object({ familyId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })) }),
      response: { ...ARCHIVE, 404: ErrorRef, ...authErrors },
    },
    handler: async (req, reply) => {
      const { familyId } = req.query;
      if (familyId === undefined) return sendArchive(reply, transfer.instanceArchive(), 'cardshelf-instance.tar.gz');
      const archive = await transfer.familyArchive(familyId);
      if (!archive) throw notFound('family');
      return sendArchive(reply, archive, `cardshelf-family-${familyId}.tar.gz`);
    },
  });
}
