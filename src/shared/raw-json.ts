/**
 * Stored documents (cards, wishlist content) are kept as JSON text and sent as they are, not
 * parsed and serialised again. These helpers splice such text into a response.
 */
export type RawJson = string & { readonly __rawJson: unique symbol };

export const asRawJson = (text: string): RawJson => text as RawJson;

export const rawArray = (items: readonly string[]): RawJson => `[${items.join(',')}]` as RawJson;

/** JSON of `fields` with more members whose values are already JSON text; `fields` non-empty. */
export function withRaw(fields: Record<string, unknown>, raw: Record<string, string>): RawJson {
  let out = JSON.stringify(fields).slice(0, -1);
  for (const [key, value] of Object.entries(raw)) out += `,${JSON.stringify(key)}:${value}`;
  return `${out}}` as RawJson;
}

/** `{"<key>": <raw>}` */
export const wrapRaw = (key: string, raw: string): RawJson => `{${JSON.stringify(key)}:${raw}}` as RawJson;

/** `{"<key>": <raw>, ...}`: an object whose members are all JSON text already. */
export const rawObject = (members: Record<string, string>): RawJson =>
  `{${Object.entries(members)
    .map(([key, raw]) => `${JSON.stringify(key)}:${raw}`)
    .join(',')}}` as RawJson;
