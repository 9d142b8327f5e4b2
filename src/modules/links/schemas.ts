import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PathId, Timestamp } from '../../shared/schemas.js';
import { MAX_CARDS_A_JOB, MAX_LINK_NAME_LENGTH, MAX_URL_LENGTH } from './rules.js';

const BaseUrl = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: `${description}: an absolute http(s) URL` });

export const CreateLinkBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: MAX_LINK_NAME_LENGTH, description: 'what the member calls the link' }),
    apiBaseUrl: BaseUrl("the remote's API base URL (`https://api.yotoplay.com` for the public service)"),
    authBaseUrl: BaseUrl("the remote's sign-in base URL, where `/oauth/device/code` and `/oauth/token` are (`https://login.yotoplay.com`)"),
    clientId: Type.String({ minLength: 1, maxLength: 128, description: 'the client id the remote knows the app by' }),
    audience: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'sent as `audience` with the sign-in (the public service: `https://api.yotoplay.com`)' })),
  },
  { title: 'CreateLink', additionalProperties: false },
);
export type CreateLinkBody = Static<typeof CreateLinkBody>;

export const LinkState = Type.Union([Type.Literal('signing-in'), Type.Literal('linked'), Type.Literal('failed')]);

export const Link = Type.Object(
  {
    linkId: Type.String(),
    name: Type.String(),
    apiBaseUrl: Type.String(),
    authBaseUrl: Type.String(),
    clientId: Type.String(),
    audience: Nullable(Type.String()),
    state: LinkState,
    reason: Type.Optional(Type.String({ description: 'why the link failed' })),
    userCode: Type.Optional(Type.String({ description: 'while signing in: the code to enter at the remote' })),
    verificationUri: Type.Optional(Type.String()),
    verificationUriComplete: Type.Optional(Type.String()),
    expiresAt: Type.Optional(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Link', title: 'Link' },
);
export type Link = Static<typeof Link>;

export const LinkAnswer = Type.Object({ link: Type.Ref('Link') });
export const LinkList = Type.Object({ links: Type.Array(Type.Ref('Link')) });
export const LinkParams = Type.Object({ linkId: PathId('the link id') });
export const JobParams = Type.Object({ linkId: PathId('the link id'), jobId: PathId('the job id') });

const CardIds = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: MAX_CARDS_A_JOB, uniqueItems: true });

export const PullBody = Type.Object(
  {
    cardIds: Type.Optional({ ...CardIds, description: "the remote's card ids; absent: every MYO card of the remote account" }),
    overwrite: Type.Optional(Type.Boolean({ description: 'copy cards changed on both sides too (the remote wins)' })),
  },
  { title: 'Pull', additionalProperties: false },
);
export type PullBody = Static<typeof PullBody>;

export const PushBody = Type.Object(
  {
    cardIds: { ...CardIds, description: 'the local card ids (your own MYO cards)' },
    overwrite: Type.Optional(Type.Boolean({ description: 'copy cards changed on both sides too (this side wins)' })),
  },
  { title: 'Push', additionalProperties: false },
);
export type PushBody = Static<typeof PushBody>;

export const JobKind = Type.Union([Type.Literal('pull'), Type.Literal('push')]);
export const JobState = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]);

/**
 * A card's outcome: `copied` (created or updated where it landed), `unchanged` (nothing copied),
 * `conflict` (changed on both sides since the last copy: left as it is), `deleted-remote` (the
 * remote card is gone: nothing deleted here), `failed` (with `error`); `pending` until done.
 */
export const JobCardState = Type.Union([
  Type.Literal('pending'),
  Type.Literal('copied'),
  Type.Literal('unchanged'),
  Type.Literal('conflict'),
  Type.Literal('deleted-remote'),
  Type.Literal('failed'),
]);
export type JobCardState = Static<typeof JobCardState>;

export const JobCard = Type.Object({
  remoteCardId: Nullable(Type.String()),
  cardId: Nullable(Type.String({ description: 'the local card' })),
  title: Type.Optional(Type.String()),
  state: JobCardState,
  error: Type.Optional(Type.String()),
});
export type JobCard = Static<typeof JobCard>;

export const Job = Type.Object(
  {
    jobId: Type.String(),
    linkId: Type.String(),
    kind: JobKind,
    state: JobState,
    error: Type.Optional(Type.String()),
    cards: Type.Array(JobCard),
    files: Type.Object({ done: Type.Integer(), total: Type.Integer() }),
    bytes: Type.Integer({ description: 'bytes of media copied' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'LinkJob', title: 'LinkJob' },
);
export type Job = Static<typeof Job>;

export const JobAnswer = Type.Object({ job: Type.Ref('LinkJob') });
export const JobList = Type.Object({ jobs: Type.Array(Type.Ref('LinkJob')) });
