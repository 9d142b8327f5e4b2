import type { components } from '../../api-types.js';
import { formatDate } from '../../format.js';
import { messages } from '../../messages.js';

export type NamedMember = components['schemas']['NamedMember'];

/**
 * How the app names a member: their account's name, else their verified email, else "A parent
 * (joined 3 May)" (a member who signs in elsewhere): never their user id.
 */
export const nameOf = (m: NamedMember): string => m.displayName ?? m.verifiedEmail ?? messages.members.aParent(formatDate(m.addedAt));
