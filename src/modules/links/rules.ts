/** The limits and fixed values of linked services (issue 34; docs/api.md "Linked services"). */

export const MAX_LINK_NAME_LENGTH = 100;
export const MAX_URL_LENGTH = 2048;
/** Links a member may hold; each one polls and holds tokens. */
export const MAX_LINKS_PER_USER = 10;
/** Card ids one pull or push may name. */
export const MAX_CARDS_A_JOB = 500;
/** Jobs kept a link (the oldest finished ones go first). */
export const MAX_JOBS_KEPT_PER_LINK = 50;

/**
 * The public service's URLs, offered as a preset. Its apps need a client id registered by the
 * user or operator (its developer dashboard); there is no shared one to put here.
 */
export const PUBLIC_SERVICE_PRESET = {
  name: 'Yoto',
  apiBaseUrl: 'https://api.yotoplay.com',
  authBaseUrl: 'https://login.yotoplay.com',
  audience: 'https://api.yotoplay.com',
} as const;

/** What the device sign-in asks the remote for: the API's scopes, and a refresh token. */
export const SIGN_IN_SCOPE = 'openid profile offline_access';

/** RFC 8628 3.5: with `slow_down`, the interval grows by 5 seconds. */
export const SLOW_DOWN_SECONDS = 5;
/** A device flow's interval when the remote names none (RFC 8628 3.2). */
export const DEFAULT_POLL_SECONDS = 5;
/** Refresh the access token this long before it expires. */
export const REFRESH_MARGIN_MS = 60_000;
/** How long a revocation at the remote may take (it runs after the link is forgotten here). */
export const REVOKE_TIMEOUT_MS = 10_000;
