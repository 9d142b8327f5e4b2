import { randomBytes } from 'node:crypto';
import { customAlphabet, nanoid } from 'nanoid';

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Card ids: 5 characters of [A-Za-z0-9] (DECISIONS.md, "Cards"). */
export const newCardId: () => string = customAlphabet(ALNUM, 5);
export const CARD_ID_PATTERN = '^[A-Za-z0-9]{5}$';

/** Wishlist and share ids: 21 URL-safe characters of [A-Za-z0-9_-]. */
export const newUrlSafeId = (): string => nanoid(21);

/** Library records, groups and families: 24 hex digits, the shape of the original service's ids. */
export const newHexId = (): string => randomBytes(12).toString('hex');
