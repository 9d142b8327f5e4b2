import type { Insertable } from 'kysely';
import type { Database } from '../../src/db/database.js';

/**
 * Rows a test writes straight to the database, for states the API does not make: a worker that
 * died mid-job, records the sign-in engine left, a link as another instance sealed it. Each
 * builder takes the row's key and what the test means, and fills the other columns with plain
 * defaults (null where a column may be null, 0, an empty document, ROW_TIME for a time that must
 * be set), so a test names only what it is about, and a column a table gains that must be set
 * fails tsc here rather than in every test.
 */
export const ROW_TIME = '2026-01-01T00:00:00.000Z';

export type Row<T extends keyof Database> = Insertable<Database[T]>;
/**
 * The columns in K, and any others the test sets. A builder lists the columns in the table's
 * order: a row put into an archive (support/archives.ts editTable) must keep it.
 */
type Given<T extends keyof Database, K extends keyof Row<T>> = Pick<Row<T>, K> & Partial<Row<T>>;

export function transcodeRow(given: Given<'transcodes', 'source_sha256'>): Row<'transcodes'> {
  const { source_sha256, ...row } = given;
  return {
    source_sha256, loudnorm: 0, status: 'queued', attempts: 0, lease_until: null, progress: 0,
    transcoded_sha256: null, transcoded_info: null, error: null, created_at: ROW_TIME, updated_at: ROW_TIME,
    ...row,
  };
}

export function audioUploadRow(given: Given<'audio_uploads', 'upload_id' | 'user_id'>): Row<'audio_uploads'> {
  const { upload_id, user_id, ...row } = given;
  return {
    upload_id, user_id, filename: null, declared_sha256: null, state: 'awaiting', source_sha256: null,
    url_expires_at: ROW_TIME, created_at: ROW_TIME, updated_at: ROW_TIME,
    ...row,
  };
}

export function mediaObjectRow(given: Given<'media_objects', 'sha256'>): Row<'media_objects'> {
  const { sha256, ...row } = given;
  return { sha256, size: 0, content_type: 'application/octet-stream', created_at: ROW_TIME, ...row };
}

export function familyImageRow(given: Given<'family_images', 'family_id' | 'image_id'>): Row<'family_images'> {
  const { family_id, image_id, ...row } = given;
  return { family_id, image_id, size: 0, created_at: ROW_TIME, ...row };
}

/**
 * account_id and client_id (migration 007) are left to the database, which fills them in with
 * null, unless the test sets them: so the row also fits the table as it was before 007.
 */
export function oauthRecordRow(given: Given<'oauth_records', 'model' | 'id'>): Row<'oauth_records'> {
  const { model, id, ...row } = given;
  return { model, id, payload: '{}', grant_id: null, user_code: null, uid: null, expires_at: null, ...row };
}

export function passkeyRow(given: Given<'passkeys', 'id' | 'user_id'>): Row<'passkeys'> {
  const { id, user_id, ...row } = given;
  return {
    id, user_id, public_key: `pk-${id}`, counter: 0, transports: '[]', name: `key ${id}`,
    created_at: ROW_TIME, last_used_at: null,
    ...row,
  };
}

export function invitationRow(given: Given<'invitations', 'secret_hash' | 'family_id' | 'invited_by'>): Row<'invitations'> {
  const { secret_hash, family_id, invited_by, ...row } = given;
  return { secret_hash, family_id, invited_by, created_at: ROW_TIME, expires_at: ROW_TIME, used_at: null, used_by: null, ...row };
}

export function setupLinkRow(given: Given<'setup_links', 'secret_hash'>): Row<'setup_links'> {
  const { secret_hash, ...row } = given;
  return { secret_hash, created_at: ROW_TIME, expires_at: ROW_TIME, used_at: null, ...row };
}

export function throttleCounterRow(given: Given<'throttle_counters', 'key'>): Row<'throttle_counters'> {
  const { key, ...row } = given;
  return { key, attempts: 0, last_attempt_at: ROW_TIME, locked_until: ROW_TIME, ...row };
}

export function tokenRevocationRow(given: Given<'token_revocations', 'kind' | 'subject'>): Row<'token_revocations'> {
  const { kind, subject, ...row } = given;
  return { kind, subject, revoked_at: ROW_TIME, expires_at: null, ...row };
}

export function accountSessionRow(given: Given<'account_sessions', 'id' | 'user_id'>): Row<'account_sessions'> {
  const { id, user_id, ...row } = given;
  return { id, user_id, created_at: ROW_TIME, confirmed_at: ROW_TIME, expires_at: ROW_TIME, ...row };
}

/** A linked link (signed in, nothing sealed unless the test seals it). */
export function linkRow(given: Given<'links', 'link_id' | 'user_id'>): Row<'links'> {
  const { link_id, user_id, ...row } = given;
  return {
    link_id, user_id, name: 'A remote', api_base_url: 'https://api.remote.example', auth_base_url: 'https://login.remote.example',
    client_id: 'client-of-the-remote', audience: null, state: 'linked', reason: null,
    user_code: null, verification_uri: null, verification_uri_complete: null, expires_at: null,
    device_code_sealed: null, poll_interval: 5, next_poll_at: null,
    refresh_token_sealed: null, access_token_sealed: null, access_expires_at: null,
    created_at: ROW_TIME, updated_at: ROW_TIME,
    ...row,
  };
}

export function linkCardRow(given: Given<'link_cards', 'link_id' | 'remote_card_id' | 'local_card_id'>): Row<'link_cards'> {
  const { link_id, remote_card_id, local_card_id, ...row } = given;
  return { link_id, remote_card_id, local_card_id, remote_fingerprint: '0'.repeat(64), local_version: 1, updated_at: ROW_TIME, ...row };
}

export function linkJobRow(given: Given<'link_jobs', 'job_id' | 'link_id' | 'user_id'>): Row<'link_jobs'> {
  const { job_id, link_id, user_id, ...row } = given;
  return {
    job_id, link_id, user_id, kind: 'pull', state: 'queued', request: '{"overwrite":false}', cards: '[]',
    files_done: 0, files_total: 0, bytes: 0, error: null, attempts: 0, lease_until: null,
    created_at: ROW_TIME, updated_at: ROW_TIME,
    ...row,
  };
}
