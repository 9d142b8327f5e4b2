import type { Static, TObject } from '@sinclair/typebox';
import type { RawJson } from './raw-json.js';

/** JSON text that goes into an answer as it is, as one member's value (a stored document). */
export class Spliced {
  constructor(readonly json: string) {}
}

export const spliced = (json: string): Spliced => new Spliced(json);

/** The members of an answer of `S`'s shape, any of them given as JSON text already. */
export type AnswerValues<S extends TObject> = { [K in keyof Static<S>]: Static<S>[K] | Spliced };

/** `"<key>":` of each member of a schema, in its order, made once per schema. */
const prefixes = new WeakMap<TObject, [key: string, prefix: string][]>();

function prefixesOf(schema: TObject): [string, string][] {
  let found = prefixes.get(schema);
  if (!found) {
    found = Object.keys(schema.properties).map((key) => [key, `${JSON.stringify(key)}:`]);
    prefixes.set(schema, found);
  }
  return found;
}

/**
 * An answer of `schema`'s shape as JSON text: its members in the schema's order, each from
 * `values`; a Spliced value goes in as the text it is (not parsed and serialised again), an
 * undefined one (an optional member) is left out. The schema is the one list of the answer's
 * members: a member added to it must be given here (tsc says where), and reaches the wire, the
 * OpenAPI document and the web app's types together.
 */
export function renderAnswer<S extends TObject>(schema: S, values: AnswerValues<S>): RawJson {
  const given = values as Record<string, unknown>;
  let out = '';
  for (const [key, prefix] of prefixesOf(schema)) {
    const value = given[key];
    if (value === undefined) continue;
    out += `${out === '' ? '{' : ','}${prefix}${value instanceof Spliced ? value.json : JSON.stringify(value)}`;
  }
  return (out === '' ? '{}' : `${out}}`) as RawJson;
}
