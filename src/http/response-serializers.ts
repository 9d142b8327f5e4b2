import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type BuildSerializer = NonNullable<CompilersFactory['buildSerializer']>;

// Fastify's default serializer factory, the very module Fastify loads when given none.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const defaultFactory = fromFastify('@fastify/fast-json-stringify-compiler') as () => BuildSerializer;

/** Adds to `into` the ids of the schemas `schema` names by `$ref` ('Card#/properties/x' names 'Card'). */
function addRefs(schema: unknown, into: Set<string>): void {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const id = value.split('#')[0];
        if (id) into.add(id);
      } else stack.push(value);
    }
  }
}

/**
 * Fastify's response serializers, each compiled with the shared schemas it names (through
 * `$ref`, at any depth) rather than all of them. fast-json-stringify validates and walks every
 * shared schema it is given on every compile: the app compiles some 670 response schemas and
 * shares 47, so each start spent seconds checking the same schemas again, in every worker and
 * in every app the tests build. The serializers are the same: a schema never named plays no
 * part in one.
 */
export const buildSerializer: BuildSerializer = (externalSchemas, serializerOpts) => {
  const shared = (externalSchemas ?? {}) as Record<string, unknown>;
  const compilerOf = defaultFactory();
  return (route) => {
    const named = new Set<string>();
    addRefs(route.schema, named);
    for (const id of named) if (id in shared) addRefs(shared[id], named);
    const given = Object.fromEntries(Object.entries(shared).filter(([id]) => named.has(id)));
    return compilerOf(given, serializerOpts)(route);
  };
};
