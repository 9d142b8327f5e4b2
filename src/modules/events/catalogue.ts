import { Type, type Static, type TLiteral, type TObject, type TProperties, type TString } from '@sinclair/typebox';
import { DeviceCommandRef, type DeviceStatus } from '../devices/schemas.js';
import { JobState, LinkState } from '../links/schemas.js';
import { TaggedUnion } from '../../shared/schemas.js';

/**
 * The catalogue of live events (`GET /user/family/events`, docs/api.md "Live events"): one schema
 * per kind for the event's `data`, its `kind`, the `ids` of what changed, the read it affects
 * and that read's tag where the kind has them, and the kind's own fields. `publish` takes its
 * events typed from here (publish.ts), the OpenAPI document carries them (component
 * `LiveEvent`, so the web app's generated types cover them), and readers of the log (the MQTT
 * bridge) read them with these types. A kind is added here, or it cannot be published.
 */

/** `player.command` -> `PlayerCommandEvent`: each kind's schema is a named component of the document. */
const idOf = (kind: string): string => `${kind.replace(/(^|[.-])(.)/g, (_m, _sep: string, c: string) => c.toUpperCase())}Event`;

const Id = Type.String();
/** `ids` naming exactly these. */
const ids = <N extends string>(...names: N[]): TObject<Record<N, TString>> =>
  Type.Object(Object.fromEntries(names.map((name) => [name, Id])) as Record<N, TString>, { additionalProperties: false });
const Read = Type.String({ description: 'the read the change affects (its path): fetch it again, with `If-None-Match`' });
const Tag = Type.String({ description: 'the entity tag (`ETag`) that read answers with now: a client holding it has nothing to fetch' });

const event = <K extends string, P extends TProperties>(kind: K, description: string, props: P): TObject<{ kind: TLiteral<K> } & P> =>
  Type.Object({ kind: Type.Literal(kind), ...props }, { additionalProperties: false, $id: idOf(kind), title: idOf(kind), description });

const tagged = { read: Read, tag: Tag };

export const LIVE_EVENT_SCHEMAS = {
  'library.added': event('library.added', "a library record's card entered the family library (the plain form's tag)", { ids: ids('cardId', 'recordId'), ...tagged }),
  'library.removed': event('library.removed', "a library record's card left the family library (an operator deleted the catalogue card)", { ids: ids('cardId', 'recordId'), ...tagged }),
  'group.created': event('group.created', 'a group of the family library was created', { ids: ids('groupId'), ...tagged }),
  'group.changed': event('group.changed', 'a group of the family library changed', { ids: ids('groupId'), ...tagged }),
  'group.deleted': event('group.deleted', "a group was deleted: `read` is the list of groups", { ids: ids('groupId'), ...tagged }),
  'card.created': event('card.created', "a member's MYO card was created", { ids: ids('cardId', 'userId'), ...tagged }),
  'card.changed': event('card.changed', "a member's MYO card changed", { ids: ids('cardId', 'userId'), ...tagged }),
  'card.deleted': event('card.deleted', "a member's MYO card was deleted", { ids: ids('cardId', 'userId'), ...tagged }),
  'wishlist.created': event('wishlist.created', "one of the caller's wishlists was created (`read` is the list)", { ids: ids('wishlistId'), ...tagged }),
  'wishlist.changed': event('wishlist.changed', "one of the caller's wishlists changed (`read` is the list)", { ids: ids('wishlistId'), ...tagged }),
  'wishlist.deleted': event('wishlist.deleted', "one of the caller's wishlists was deleted (`read` is the list)", { ids: ids('wishlistId'), ...tagged }),
  'family.changed': event(
    'family.changed',
    "the family's members or devices changed (`familyId`, with `read` and `tag`), or, to a user alone, that user moved (`userId`, and the new `familyId` if any)",
    {
      ids: Type.Object({ familyId: Type.Optional(Id), userId: Type.Optional(Id) }, { additionalProperties: false }),
      read: Type.Optional(Read),
      tag: Type.Optional(Tag),
    },
  ),
  'account.disabled': event('account.disabled', "the caller's account was disabled: the stream ends", { ids: ids('userId') }),
  'transcode.finished': event('transcode.finished', "an upload's transcode finished (no tag: the answer's is its hash)", { ids: ids('uploadId'), read: Read }),
  'transcode.failed': event('transcode.failed', "an upload's transcode failed", { ids: ids('uploadId'), read: Read }),
  'link.changed': event('link.changed', 'a linked service signed in, failed or was unlinked', { ids: ids('linkId'), read: Read, state: LinkState }),
  'link.job': event('link.job', "a pull's or push's progress", {
    ids: ids('linkId', 'jobId'),
    read: Read,
    state: JobState,
    files: Type.Object({ done: Type.Integer(), total: Type.Integer() }, { additionalProperties: false }),
    bytes: Type.Integer({ description: 'bytes of media copied' }),
  }),
  'player.command': event('player.command', 'a command for the player `ids.deviceId`, as sent to `POST /device-v2/{id}/command`', {
    ids: ids('deviceId', 'commandId'),
    command: DeviceCommandRef,
    sentBy: Type.String({ description: 'the member who sent it' }),
  }),
  'player.status': event('player.status', 'the player `ids.deviceId` reported its status (or went offline)', {
    ids: ids('deviceId'),
    read: Read,
    status: Type.Unsafe<DeviceStatus>(Type.Ref('DeviceStatus', { description: 'as `GET /device-v2/{id}/status` answers it' })),
  }),
  'player.added': event('player.added', 'a player was registered in the family', { ids: ids('deviceId'), read: Read }),
  'player.removed': event('player.removed', "a player was removed from the family: its streams end", { ids: ids('deviceId'), read: Read }),
} as const;

/** The hub's own event: the events after the client's `Last-Event-ID` are no longer kept; refetch everything. */
export const ResetEvent = Type.Object({ kind: Type.Literal('reset') }, { additionalProperties: false, $id: 'ResetEvent', title: 'ResetEvent', description: 'events were missed: refetch everything' });

type Schemas = typeof LIVE_EVENT_SCHEMAS;
/** The kinds a module publishes. */
export type EventKind = keyof Schemas;
/** The data of an event of kind `K`, as the stream sends it. */
export type EventData<K extends EventKind = EventKind> = { [Kind in K]: Static<Schemas[Kind]> }[K];
/** The data of any event of the stream: a published one, or the hub's `reset`. */
export type StreamEventData = EventData | Static<typeof ResetEvent>;

export const EVENT_KINDS = Object.keys(LIVE_EVENT_SCHEMAS) as EventKind[];

/** The stream's events as one schema (component `LiveEvent`), told apart by `kind`. */
export const LiveEvent = TaggedUnion<StreamEventData>({
  id: 'LiveEvent',
  description: "the `data` of an event of `GET /user/family/events`: `kind` names it (the SSE `event` field repeats it), and says which of the other fields it has",
  tag: 'kind',
  names: [...EVENT_KINDS, 'reset'],
  members: [...Object.values(LIVE_EVENT_SCHEMAS), ResetEvent],
});

/** Every schema the document carries for the events. */
export const LIVE_EVENT_COMPONENTS = [...Object.values(LIVE_EVENT_SCHEMAS), ResetEvent, LiveEvent];
