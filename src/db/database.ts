import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The schema, as Kysely sees it. Column types are portable on purpose: timestamps are ISO 8601
 * strings (they sort as text), booleans are 0/1 integers, and JSON documents are text. So the
 * same rows, queries and migrations serve SQLite and PostgreSQL, and a stored JSON document can
 * be sent to a client without being parsed and serialised again.
 */
export interface Database {
  cards: CardsTable;
  families: FamiliesTable;
  family_memberships: FamilyMembershipsTable;
  family_devices: FamilyDevicesTable;
  family_events: FamilyEventsTable;
  library_records: LibraryRecordsTable;
  library_groups: LibraryGroupsTable;
  wishlists: WishlistsTable;
  media_objects: MediaObjectsTable;
  media_holdings: MediaHoldingsTable;
  audio_uploads: AudioUploadsTable;
  transcodes: TranscodesTable;
  display_icons: DisplayIconsTable;
  family_images: FamilyImagesTable;
  readiness_probe: ReadinessProbeTable;
  change_counters: ChangeCountersTable;
  idempotency_keys: IdempotencyKeysTable;
  accounts: AccountsTable;
  oauth_records: OAuthRecordsTable;
  throttle_counters: ThrottleCountersTable;
  invitations: InvitationsTable;
  live_events: LiveEventsTable;
  setup_links: SetupLinksTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  token_revocations: TokenRevocationsTable;
  account_sessions: AccountSessionsTable;
  links: LinksTable;
  link_cards: LinkCardsTable;
  link_jobs: LinkJobsTable;
}

/** 0 or 1: booleans stored portably. */
export type Flag = number;

export interface CardsTable {
  card_id: string;
  /** The owner (a token `sub`). */
  user_id: string;
  /** `myo` (made by a user) or `catalogue` (loaded by an operator). */
  origin: 'myo' | 'catalogue';
  /** Readable by everyone and addable to any library. */
  is_free: Flag;
  /** Part of the club subscription: addable to any library. */
  in_club: Flag;
  deleted: Flag;
  sortkey: string;
  created_at: string;
  updated_at: string;
  /** The full card, with chapters, as JSON. */
  doc: string;
  /** The list form (no `content.chapters`), as JSON. */
  summary: string;
  /** Bumped by every write of the card (migration 004): its entity tag. */
  version: Generated<number>;
}

export interface FamiliesTable {
  family_id: string;
  country: string;
  /** JSON object, e.g. {"sharingOn": false}. */
  flags: string;
  created_at: string;
  updated_at: string;
}

/**
 * Which family a user belongs to (at most one: the key is the user). `listed` tells whether the
 * user shows in the family's `members`; a user who only has a stub family is not listed.
 */
export interface FamilyMembershipsTable {
  user_id: string;
  family_id: string;
  listed: Flag;
  added_at: string;
  approved: Flag;
  approved_at: string | null;
  verified: Flag;
  verified_email: string | null;
  /** Position in the members array, as the operator gave it. */
  position: number;
}

export interface FamilyDevicesTable {
  device_id: string;
  family_id: string;
  added_at: string;
  position: number;
  /** The player's columns (migration 009), null for a device an operator listed by id alone. */
  name: string | null;
  device_type: string | null;
  /** JSON: the device's settings as last written (null: the defaults). */
  config: string | null;
  /** JSON: the shortcuts document (null: none set). */
  shortcuts: string | null;
  /** JSON: the last status the player reported, and when. */
  status: string | null;
  status_at: string | null;
  /** The `jti` of the player's one valid credential; null: the device holds none. */
  credential_id: string | null;
  /** The member who registered the player (its credential acts for the family through them). */
  registered_by: string | null;
}

export interface FamilyEventsTable {
  id: Generated<number>;
  family_id: string;
  type: string;
  at: string;
  /** JSON object of the event's details. */
  details: string;
}

export interface LibraryRecordsTable {
  record_id: string;
  family_id: string;
  card_id: string;
  provenance_id: string;
  reason: string;
  created_at: string;
  updated_at: string;
}

export interface LibraryGroupsTable {
  group_id: string;
  family_id: string;
  name: string;
  image_id: string;
  /** JSON array of {contentId, addedAt}. */
  items: string;
  created_at: string;
  last_modified_at: string;
  /** Bumped by every write of the group (migration 004). */
  version: Generated<number>;
}

export interface WishlistsTable {
  wishlist_id: string;
  share_id: string;
  user_id: string;
  /** JSON array of content elements, as sent. */
  content: string;
  /** The owner's name for it; null: none (migration 014). */
  name: string | null;
  created_at: string;
  updated_at: string;
  /** Bumped by every write of the wishlist (migration 004). */
  version: Generated<number>;
}

/** Sizes are `bigint` columns: PostgreSQL hands them back as strings, SQLite as numbers. */
type BigIntColumn = number | string;

/** Media tables (migration 002): see migrations/002-media.ts. */
export interface MediaObjectsTable {
  sha256: string;
  size: BigIntColumn;
  content_type: string;
  created_at: string;
}

export interface MediaHoldingsTable {
  /** A user id, or `family:<familyId>` for a family's images. */
  owner_id: string;
  sha256: string;
  kind: 'audio-source' | 'audio' | 'cover' | 'icon' | 'family-image';
  size: BigIntColumn;
  created_at: string;
}

export interface AudioUploadsTable {
  upload_id: string;
  user_id: string;
  filename: string | null;
  declared_sha256: string | null;
  state: 'awaiting' | 'receiving' | 'received';
  source_sha256: string | null;
  url_expires_at: string;
  created_at: string;
  updated_at: string;
}

export interface TranscodesTable {
  source_sha256: string;
  loudnorm: Flag;
  status: 'queued' | 'running' | 'done' | 'failed';
  attempts: number;
  lease_until: string | null;
  progress: number;
  transcoded_sha256: string | null;
  transcoded_info: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface DisplayIconsTable {
  display_icon_id: string;
  user_id: string;
  media_id: string;
  title: string | null;
  /** JSON array of strings. */
  public_tags: string;
  created_at: string;
}

export interface FamilyImagesTable {
  family_id: string;
  image_id: string;
  size: BigIntColumn;
  created_at: string;
}

/** One row (id 1), rewritten by every readiness check: see db/readiness.ts. */
export interface ReadinessProbeTable {
  id: number;
  at: string;
}

/** Migration 004: see db/change-counters.ts. */
export interface ChangeCountersTable {
  scope: string;
  version: BigIntColumn;
}

/** Migration 004: see http/idempotency.ts. */
export interface IdempotencyKeysTable {
  user_id: string;
  idempotency_key: string;
  fingerprint: string;
  state: 'in-flight' | 'done';
  status: number | null;
  content_type: string | null;
  body: string | null;
  created_at: string;
  claimed_at: string;
}

/** Migration 006: see accounts/repository.ts. */
export interface AccountsTable {
  user_id: string;
  email: string;
  email_key: string;
  display_name: string;
  password_hash: string | null;
  owner: number;
  disabled: number;
  created_at: string;
  updated_at: string;
}

/** Migration 006: see oauth/adapter.ts. */
export interface OAuthRecordsTable {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: string | null;
  /** Migration 007: the payload's `accountId` and `clientId`, for look-ups by account and by app. */
  account_id: string | null;
  client_id: string | null;
}

/** Migration 006: see accounts/throttle.ts. */
export interface ThrottleCountersTable {
  key: string;
  attempts: number;
  last_attempt_at: string;
  locked_until: string;
}

/** Migration 006: see accounts/invitations.ts. */
export interface InvitationsTable {
  secret_hash: string;
  family_id: string;
  invited_by: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  used_by: string | null;
}

/** Migration 008: see modules/events/publish.ts. */
export interface LiveEventsTable {
  /** PostgreSQL hands a bigint back as a string. */
  id: Generated<number | string>;
  family_id: string | null;
  user_id: string | null;
  kind: string;
  at: string;
  data: string;
}

export type AccountRow = Selectable<AccountsTable>;
export type InvitationRow = Selectable<InvitationsTable>;
export type CardRow = Selectable<CardsTable>;
export type NewCardRow = Insertable<CardsTable>;
export type CardRowUpdate = Updateable<CardsTable>;
export type FamilyRow = Selectable<FamiliesTable>;
export type MembershipRow = Selectable<FamilyMembershipsTable>;
export type DeviceRow = Selectable<FamilyDevicesTable>;
export type FamilyEventRow = Selectable<FamilyEventsTable>;
export type LibraryRecordRow = Selectable<LibraryRecordsTable>;
export type GroupRow = Selectable<LibraryGroupsTable>;
export type WishlistRow = Selectable<WishlistsTable>;
export type AudioUploadRow = Selectable<AudioUploadsTable>;
export type TranscodeRow = Selectable<TranscodesTable>;
export type DisplayIconRow = Selectable<DisplayIconsTable>;
export type FamilyImageRow = Selectable<FamilyImagesTable>;

/** Migration 007: see accounts/setup-link.ts. */
export interface SetupLinksTable {
  secret_hash: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** Migration 010: see accounts/passkeys.ts. */
export interface PasskeysTable {
  id: string;
  user_id: string;
  public_key: string;
  /** bigint on PostgreSQL, which the driver hands over as a string. */
  counter: number | string;
  transports: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** Migration 010: see accounts/passkeys.ts. */
export interface PasskeyChallengesTable {
  challenge: string;
  purpose: string;
  subject: string;
  expires_at: string;
}

/** Migration 011: see auth/revocations.ts. */
export interface TokenRevocationsTable {
  /** PostgreSQL hands a bigint back as a string. */
  id: Generated<number | string>;
  kind: 'grant' | 'token' | 'account';
  subject: string;
  revoked_at: string;
  expires_at: string | null;
}

/** Migration 012: see accounts/account-sessions.ts. */
export interface AccountSessionsTable {
  id: string;
  user_id: string;
  created_at: string;
  confirmed_at: string;
  expires_at: string;
}

/** A member's linked account on another service (migration 013; src/modules/links/). */
export interface LinksTable {
  link_id: string;
  user_id: string;
  name: string;
  api_base_url: string;
  auth_base_url: string;
  client_id: string;
  audience: string | null;
  state: 'signing-in' | 'linked' | 'failed';
  /** Why the link failed (denied, expired, the remote refused a refresh, ...). */
  reason: string | null;
  user_code: string | null;
  verification_uri: string | null;
  verification_uri_complete: string | null;
  /** When the device code expires (while signing in). */
  expires_at: string | null;
  device_code_sealed: string | null;
  poll_interval: number;
  next_poll_at: string | null;
  refresh_token_sealed: string | null;
  access_token_sealed: string | null;
  access_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export type LinkRow = Selectable<LinksTable>;

/** Which remote card is which local card, and how each side looked at the last copy. */
export interface LinkCardsTable {
  link_id: string;
  remote_card_id: string;
  local_card_id: string;
  remote_fingerprint: string;
  local_version: number;
  updated_at: string;
}

export type LinkCardRow = Selectable<LinkCardsTable>;

/** A pull or push, claimed by an instance under a lease. */
export interface LinkJobsTable {
  job_id: string;
  link_id: string;
  user_id: string;
  kind: 'pull' | 'push';
  state: 'queued' | 'running' | 'done' | 'failed';
  /** JSON: `{"cardIds"?: string[], "overwrite": boolean}`. */
  request: string;
  /** JSON: each card's outcome (links/schemas.ts JobCard). */
  cards: string;
  files_done: number;
  files_total: number;
  /** bigint: PostgreSQL hands it back as a string. */
  bytes: number | string;
  error: string | null;
  attempts: number;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

export type LinkJobRow = Selectable<LinkJobsTable>;
