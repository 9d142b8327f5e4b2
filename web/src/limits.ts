/**
 * The interface's limits on what a person types, as the server's schemas enforce them
 * (src/modules/cards/schemas.ts; docs/api.md "Cards"): fields carry them as `maxlength` and a
 * counter, so the server never has to refuse them. test/api/web-limits.test.ts holds them to the
 * server's OpenAPI document.
 */
export const LIMITS = {
  /** A card's `title`, in characters. */
  cardTitle: 100,
} as const;
