import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { badRequest } from '../shared/errors.js';
import { unfitText } from '../shared/text.js';

/**
 * Deepest nesting a request body may have. Real cards nest about 6 levels; a limit keeps a
 * hostile `[[[[...]]]]` from overflowing the stack when the document is stored.
 */
export const MAX_JSON_DEPTH = 64;

/** Why a string or number cannot be kept, or undefined. */
function unfitScalar(value: unknown): string | undefined {
  if (typeof value === 'string') return unfitText(value);
  // JSON.parse turns `1e999` into Infinity, which would be stored as `null`.
  if (typeof value === 'number' && !Number.isFinite(value)) return 'the body has a number too large to represent';
  return undefined;
}

/**
 * Why a parsed body cannot be taken, or undefined: nesting deeper than `maxDepth`, a key or
 * string with NUL or a lone surrogate, or a number out of range. Walked with an explicit stack, not
 * recursion.
 */
export function unfitJson(value: unknown, maxDepth: number): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== 'object') {
      const why = unfitScalar(node);
      if (why) return why;
      continue;
    }
    if (depth >= maxDepth) return `the body nests deeper than ${maxDepth} levels`;
    if (!Array.isArray(node)) {
      for (const key of Object.keys(node)) {
        const why = unfitText(key);
        if (why) return why;
      }
    }
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
      else {
        const why = unfitScalar(child);
        if (why) return why;
      }
    }
  }
  return undefined;
}

/**
 * The JSON body parser, the only one: refuses empty bodies, bytes that are not UTF-8 (rather
 * than turning them into U+FFFD), prototype poisoning (`__proto__`, `constructor.prototype`),
 * and what `unfitJson` finds, with a 400 that says which.
 */
export function registerJsonParser(app: FastifyInstance): void {
  // Only JSON bodies are accepted: without its parser, text/plain is refused like any other type.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json\s*(;|$)/i,
    { parseAs: 'buffer' },
    (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, value?: unknown) => void) => {
      if (typeof body !== 'string' && !isUtf8(body)) return done(badRequest('the body is not valid UTF-8'));
      const text = body.toString();
      if (text.trim() === '') {
        // Generic clients send `Content-Type: application/json` on every request, a body-less
        // DELETE included: a route that takes no body has nothing to refuse.
        if (!req.routeOptions.schema?.body) return done(null, undefined);
        return done(badRequest('the body is empty; send a JSON document'));
      }
      let value: unknown;
      try {
        value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
      } catch (err) {
        return done(badRequest(`the body is not valid JSON: ${(err as Error).message}`));
      }
      const unfit = unfitJson(value, MAX_JSON_DEPTH);
      if (unfit) return done(badRequest(unfit));
      done(null, value);
    },
  );
}
