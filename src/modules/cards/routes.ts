import { Type } from '@sinclair/typebox';
import { SCOPES } from '../../auth/scopes.js';
import { isOn } from '../../shared/query-flags.js';
import { ErrorRef, PathId, QueryFlag, StatusOk, authErrors } from '../../shared/schemas.js';
import { sendRaw, type App } from '../../http/route-app.js';
import type { CardService, SavedCard } from './service.js';
import type { SignedAnswers } from '../media/signed-answers.js';
import { AdminCardInput, CardEnvelope, CardInput, CardList } from './schemas.js';
import { CARD_ID_PATTERN } from '../../shared/ids.js';
import { ifMatchOf, sendTagged, sendTaggedRead } from '../../http/conditional.js';
import { answerWithWrite } from '../../http/idempotency.js';

const ListQuery = Type.Object({ showdeleted: QueryFlag("Includes the caller's deleted cards.") });
const CardParams = Type.Object({ cardId: PathId('the card id') });
const ReadQuery = Type.Object({
  playable: QueryFlag(
    'Answers the media references (tracks, icons) the caller may read as signed, expiring URLs; the others as stored.',
  ),
});

export async function cardRoutes(
  app: App,
  opts: { cards: CardService; signed: SignedAnswers },
): Promise<void> {
  const { cards, signed } = opts;

  // Two equivalent paths; only /content/mine asks for a scope.
  for (const [url, auth] of [
    ['/content/mine', SCOPES.contentView],
    ['/card/mine', null],
  ] as const) {
    app.get(url, {
      config: { auth, conditional: 'read' },
      schema: {
        tags: ['cards'],
        summary: "List the caller's MYO cards (list form, no chapters)",
        querystring: ListQuery,
        response: { 200: CardList, ...authErrors },
      },
      handler: async (req, reply) => {
        const { userId } = req.principal;
        const showDeleted = isOn(req.query.showdeleted);
        return sendTaggedRead(req, reply, {
          tag: () => cards.listTag(userId, showDeleted),
          both: () => cards.listMineTagged(userId, showDeleted),
        });
      },
    });
  }

  for (const [url, auth] of [
    ['/content/:cardId', SCOPES.contentView],
    ['/card/:cardId', null],
  ] as const) {
    app.get(url, {
      // A registered player reads the cards its family may play (with `playable=true`).
      config: { auth, conditional: 'read', players: true },
      schema: {
        tags: ['cards'],
        summary: 'Read one card with its chapters',
        description:
          "Readable by the owner, by members of a family whose library holds the card, and, for free catalogue cards, by everyone. Anything else answers 404.",
        params: CardParams,
        querystring: ReadQuery,
        response: { 200: CardEnvelope, ...authErrors, 404: ErrorRef },
      },
      handler: async (req, reply) => {
        const { userId } = req.principal;
        const { cardId } = req.params;
        if (!isOn(req.query.playable)) {
          // The tag alone first (no document) when the answer is likely kept or not modified.
          return sendTaggedRead(req, reply, {
            tag: () => cards.readTag(userId, cardId),
            both: async () => {
              const { card, tag } = await cards.read(userId, cardId);
              return { tag, body: card };
            },
          });
        }
        const answer = signed.forCard(userId, await cards.read(userId, cardId));
        return sendTagged(req, reply, answer.tag, answer.body, { keep: false });
      },
    });
  }

  app.post('/content', {
    config: { auth: SCOPES.contentManage, conditional: 'write', idempotent: true },
    schema: {
      tags: ['cards'],
      summary: 'Create a MYO card, or update one of yours (with its cardId)',
      description:
        'Without `cardId`: creates a card owned by the caller (201; `title` required). With the `cardId` of one of the caller\'s cards: updates the top-level fields sent, the others keep their values (200). Generated fields sent back are ignored.',
      body: CardInput,
      response: { 200: CardEnvelope, 201: CardEnvelope, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) => {
      const { result, answer } = await answerWithWrite(
        req,
        (alsoCommit) => cards.save(req.principal.userId, req.body, ifMatchOf(req), alsoCommit),
        ({ created, card }: SavedCard) => ({ status: created ? 201 : 200, body: card }),
      );
      return sendRaw(reply.header('etag', result.tag), answer.status, answer.body);
    },
  });

  app.delete('/content/:cardId', {
    config: { auth: SCOPES.contentManage },
    schema: {
      tags: ['cards'],
      summary: 'Soft-delete one of your MYO cards',
      params: CardParams,
      response: { 200: StatusOk, ...authErrors, 404: ErrorRef },
    },
    handler: async (req) => {
      await cards.remove(req.principal.userId, req.params.cardId);
      return { status: 'ok' as const };
    },
  });

  app.put('/admin/cards/:cardId', {
    config: { auth: SCOPES.admin },
    schema: {
      tags: ['admin'],
      summary: 'Create or replace a catalogue card',
      params: Type.Object({ cardId: Type.String({ pattern: CARD_ID_PATTERN, description: '5 characters of [A-Za-z0-9]' }) }),
      body: AdminCardInput,
      response: { 200: CardEnvelope, 201: CardEnvelope, ...authErrors },
    },
    handler: async (req, reply) => {
      const { created, card, tag } = await cards.adminPut(req.params.cardId, req.body);
      return sendRaw(reply.header('etag', tag), created ? 201 : 200, card);
    },
  });
}
