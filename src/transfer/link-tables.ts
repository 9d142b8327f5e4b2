import { tableSpec, type TableSpec } from './table-spec.js';

/**
 * Linked services in archives (format version 3; DECISIONS.md "Linked services": "a member's
 * export names the link, not its tokens"). Checked against the database by `tableSpec`
 * (table-spec.ts, which archive-format.ts shares, so neither imports the other).
 *
 * - `links`: what names a link (its remote's URLs, client id, audience, when it was made). Never
 *   its sign-in: the sealed device code and tokens, and the code shown while signing in, are no
 *   columns of the archive at all (sealed under the old instance's secret, they would not open
 *   on another anyway). A link arrives `failed`, "moved to another instance: link it again".
 * - `link_cards`: which remote card is which local card, so that a card pulled before stays the
 *   same card after the move rather than a second copy. Not the local card's version at the last
 *   copy: versions do not travel (a card arrives at version 1), so the pairing arrives with that
 *   side unknown (`local_version` 0, no card's version): the next push sends the card again and
 *   a pull of a card changed at the remote reports it changed on both sides, never overwriting a
 *   change made here before the move without `overwrite`.
 * - `link_jobs` stay behind: they are history, and a job queued there would run here without
 *   its sign-in.
 */
export const MOVED_REASON = 'moved to another instance: link it again';

export const LINK_TABLES: readonly TableSpec[] = [
  tableSpec({
    name: 'links',
    columns: [
      { name: 'link_id', type: 'text' },
      { name: 'user_id', type: 'text' },
      { name: 'name', type: 'text' },
      { name: 'api_base_url', type: 'text' },
      { name: 'auth_base_url', type: 'text' },
      { name: 'client_id', type: 'text' },
      { name: 'audience', type: 'text', nullable: true },
      { name: 'created_at', type: 'text' },
    ],
    // Its sign-in (sealed codes and tokens, the code shown, the poll's schedule) and its state:
    // a link arrives failed (`onImport`).
    leftOut: [
      'state',
      'reason',
      'updated_at',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
      'expires_at',
      'device_code_sealed',
      'poll_interval',
      'next_poll_at',
      'refresh_token_sealed',
      'access_token_sealed',
      'access_expires_at',
    ],
    order: ['link_id'],
    keys: [['link_id']],
    onImport: (at: string) => ({ state: 'failed', reason: MOVED_REASON, updated_at: at }),
  }),
  tableSpec({
    name: 'link_cards',
    columns: [
      { name: 'link_id', type: 'text' },
      { name: 'remote_card_id', type: 'text' },
      { name: 'local_card_id', type: 'text' },
      { name: 'remote_fingerprint', type: 'text' },
      { name: 'updated_at', type: 'text' },
    ],
    leftOut: ['local_version'],
    order: ['link_id', 'remote_card_id'],
    keys: [
      ['link_id', 'remote_card_id'],
      ['link_id', 'local_card_id'],
    ],
    references: [
      { column: 'link_id', table: 'links' },
      { column: 'local_card_id', table: 'cards' },
    ],
    onImport: () => ({ local_version: 0 }),
  }),
];
