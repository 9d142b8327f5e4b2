import type { MediaHoldingsTable } from '../../db/database.js';

/** Who holds media, as media_holdings names them; shared by this module's queries and the export. */

/** Kinds of holding that make an object public: `/media/public/{id}` serves covers and display icons to anyone. */
export const PUBLIC_KINDS: readonly MediaHoldingsTable['kind'][] = ['cover', 'icon'];

/** Media a family holds (its images) is held under the owner id `family:<familyId>`. */
export const FAMILY_OWNER_PREFIX = 'family:';
export const familyOwnerId = (familyId: string): string => `${FAMILY_OWNER_PREFIX}${familyId}`;
