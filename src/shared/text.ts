/**
 * Characters no stored text may hold. A UTF-16 surrogate without its pair (`"\ud800"` is valid
 * JSON) is not text: stored, it becomes U+FFFD (so two different ids become one), and
 * encodeURIComponent throws on it. U+0000 cannot be stored in PostgreSQL text, so it is refused
 * on every database, in the body as in ids and tokens (docs/api.md).
 */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what is looked for.
const UNSTORABLE = /[\u0000\p{Cs}]/u;
const LONE_SURROGATE = /\p{Cs}/u;
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

/** Why a string cannot be stored as sent, or undefined (one scan for the usual, fit, text). */
export function unfitText(text: string): string | undefined {
  if (!UNSTORABLE.test(text)) return undefined;
  return text.includes('\u0000')
    ? 'the body has a string with the NUL character (U+0000), which cannot be stored'
    : 'the body has a string with a lone UTF-16 surrogate; send valid Unicode text';
}

