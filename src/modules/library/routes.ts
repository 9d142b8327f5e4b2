import { SCOPES } from '../../auth/scopes.js';
import { sendTagged } from '../../http/conditional.js';
import { answerWithWrite } from '../../http/idempotency.js';
import { sendRaw, type App } from '../../http/route-app.js';
import type { RawJson } from '../../shared/raw-json.js';
import { ErrorRef, authErrors } from '../../shared/schemas.js';
import { isOn } from '../../shared/query-flags.js';
import { AddToLibraryBody, LibraryList, LibraryQuery, RecordEnvelope } from './schemas.js';
import type { AddedRecord, LibraryService } from './service.js';

export async function libraryRoutes(app: App, opts: { library: LibraryService }): Promise<void> {
  const { library } = opts;

  app.post('/card/family/library', {
    config: { auth: SCOPES.libraryManage, idempotent: true },
    schema: {
      tags: ['library'],
      summary: "Add a card to the caller's family library",
      description:
        'Only free cards and cards in the club subscription can be added (400 `card-not-eligible` otherwise). 201 with a new record, or 200 with the record the library already had; a family member\'s MYO card is in the library already (200, with the record it is held by).',
      body: AddToLibraryBody,
      response: { 200: RecordEnvelope, 201: RecordEnvelope, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) => {
      const { answer } = await answerWithWrite(
        req,
        (alsoCommit) => library.add(req.principal.userId, req.body.cardId, alsoCommit),
        ({ created, record }: AddedRecord) => {
          const status = created ? 201 : 200;
          // Serialised by this route's schema for the status, as `send` would.
          return { status, body: reply.serializeInput({ record }, String(status)) as RawJson };
        },
      );
      return sendRaw(reply, answer.status, answer.body);
    },
  });

  app.get('/card/family/library', {
    config: { auth: SCOPES.libraryView, conditional: 'read' },
    schema: {
      tags: ['library'],
      summary: "The caller's family library, in the order cards entered it",
      description:
        'The cards added to the library (`inFamilyLibrary: true`) and every live MYO card of the family\'s members (`inFamilyLibrary: false`). `showdeleted=true` adds the records whose card was deleted; `view=groups` adds the groups, each with `cards: []`.',
      querystring: LibraryQuery,
      response: { 200: LibraryList, ...authErrors },
    },
    handler: async (req, reply) => {
      const { userId } = req.principal;
      const opts = { showDeleted: isOn(req.query.showdeleted), withGroups: req.query.view === 'groups' };
      const { tag, render } = await library.listRead(userId, opts);
      return sendTagged(req, reply, tag, render);
    },
  });
}
