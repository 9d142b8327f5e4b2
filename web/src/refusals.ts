import type { ErrorBody } from './api.js';

/**
 * A refused request in words a person reads. The server words a body that fails its schema as
 * `invalid request: body/<path> <rule>` (src/http/error-handler.ts, Ajv's message); that becomes
 * the field (its path, e.g. `title` or `content/chapters/0/title`) and the rule in words. Any
 * other refusal keeps the server's message as its detail, for a generic sentence to carry.
 */
export interface Refusal {
  /** The path of the field refused, in the body (`title`, `content/chapters/2/tracks/0/title`). */
  field?: string;
  /** What is wrong with the field, in words ("can have at most 100 characters"). */
  problem?: string;
  /** The server's own message, as it is. */
  detail: string;
  /** The documented error code, when the answer had one. */
  code?: string;
}

const INVALID_BODY = /^invalid request: body\/(\S+) (.+)$/;

/** Ajv's rules, as the server words them, and the same in plain words. */
const RULES: [RegExp, (n: number) => string][] = [
  [/^must NOT have more than (\d+) characters$/, (n) => `can have at most ${n} characters`],
  [/^must NOT have fewer than (\d+) characters?$/, (n) => (n === 1 ? 'cannot be empty' : `needs at least ${n} characters`)],
];

export function refusalOf(error: unknown, response: Response): Refusal {
  const body = (error as Partial<ErrorBody> | undefined)?.error;
  const detail = body?.message ?? `HTTP ${response.status}`;
  const [, field, rule = ''] = INVALID_BODY.exec(detail) ?? [];
  if (!field) return { detail, code: body?.code };
  for (const [pattern, words] of RULES) {
    const [, n] = pattern.exec(rule) ?? [];
    if (n !== undefined) return { field, problem: words(Number(n)), detail, code: body?.code };
  }
  return { field, detail, code: body?.code };
}
