import type { FastifyInstance, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { badRequest } from './errors.js';

/**
 * Deepest nesting a request body may have. Real cards nest about 6 levels; a limit keeps a
 * hostile `[[[[...]]]]` from overflowing the stack when the document is stored.
 */
export const MAX_JSON_DEPTH = 64;

/** True when `value` nests deeper than `max` (walked with an explicit stack, not recursion). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * The JSON body parser: refuses empty bodies, prototype poisoning (`__proto__`,
 * `constructor.prototype`) and over-deep nesting with a 400 that says which.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json\s*(;|$)/i,
    { parseAs: 'string' },
    (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, value?: unknown) => void) => {
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
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
        return done(badRequest(`the body nests deeper than ${MAX_JSON_DEPTH} levels`));
      }
      done(null, value);
    },
  );
}
