import { Ajv, type ValidateFunction } from 'ajv';

/**
 * Checks answers against the OpenAPI document the app serves: the operation of the route that
 * answered must document the status, and the body must match that status's schema. Answers of
 * no documented operation (unknown paths, 405s, the hidden /docs and /metrics) are checked only
 * when they are errors, against the error shape; the sign-in pages (src/oauth/pages.ts), made for
 * browsers, may answer theirs as pages (a 429 sign-in form), and the engine's JSON endpoints in OAuth's
 * error shape (a 429 of /oauth/device/code). test/support/test-app.ts runs it on every answer of a
 * test app, so a response that drifts from its schema (or the document from the code) fails.
 */
export interface ContractCheck {
  /** Returns what is wrong with the answer, or undefined. `route` is Fastify's pattern, if a route answered. */
  (answer: { method: string; route: string | undefined; status: number; contentType: string | undefined; body: string }):
    | string
    | undefined;
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; responses: Record<string, Response> };
}
interface Operation {
  responses: Record<string, Response | { $ref: string }>;
}
interface Response {
  content?: { 'application/json'?: { schema: object } };
}

const SCHEMA_REF = '#/components/schemas/';
/** The sign-in pages' routes (src/oauth/plugin.ts): their errors may be HTML pages. */
const PAGE_ROUTE = /^\/(activate|interaction\/|invitation\/|setup\/|signup$|account(\/|$))/;
/** The sign-in engine's JSON endpoints (src/oauth/provider.ts): their errors are OAuth's (RFC 6749 section 5.2). */
const OAUTH_ROUTE = /^\/oauth\//;
const OAUTH_ERROR = {
  type: 'object',
  properties: { error: { type: 'string', pattern: '^[a-z_]+$' }, error_description: { type: 'string' } },
  required: ['error'],
};
/** Component schemas are registered under this URI scheme: `#/...` refs would not resolve outside the document. */
const SCHEMA_URI = 'openapi-schema:';

/** The document's component schemas, each compiled under its name. */
function documentSchemas(document: Document): { doc: Document; ajv: Ajv } {
  const doc = JSON.parse(JSON.stringify(document).replaceAll(`"${SCHEMA_REF}`, `"${SCHEMA_URI}`)) as Document;
  const ajv = new Ajv({ strict: false, allErrors: true });
  for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `${SCHEMA_URI}${name}`);
  return { doc, ajv };
}

/**
 * Checks the live events a stream sends (`GET /user/family/events`) against the document: each
 * event's `data` must be a `LiveEvent` (the catalogue's schema of its kind), and its SSE `event`
 * field its `kind`. Returns what is wrong with one event, or undefined.
 */
export function liveEventChecker(document: Document): (event: { event: string | undefined; data: string }) => string | undefined {
  const { doc, ajv } = documentSchemas(document);
  const validate = ajv.getSchema(`${SCHEMA_URI}LiveEvent`);
  const { mapping } = (doc.components.schemas.LiveEvent as { discriminator?: { mapping?: Record<string, string> } } | undefined)?.discriminator ?? {};
  if (!validate || !mapping) throw new Error('the document has no LiveEvent schema with its mapping');
  return ({ event, data }) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return `live event ${event}: data is not JSON: ${data.slice(0, 200)}`;
    }
    const kind = (parsed as { kind?: unknown }).kind;
    if (kind !== event) return `live event ${event}: its data's kind is ${String(kind)}`;
    // The member the kind names first, for an answer about that schema alone; then the union.
    const member = mapping[String(kind)];
    if (member === undefined) return `live event ${event}: a kind the document does not list`;
    for (const v of [ajv.getSchema(member)!, validate]) {
      if (!v(parsed)) return `live event ${event}: ${ajv.errorsText(v.errors)}: ${data.slice(0, 300)}`;
    }
    return undefined;
  };
}

export function contractChecker(document: Document): ContractCheck {
  const { doc, ajv } = documentSchemas(document);
  const errorShape = ajv.getSchema(`${SCHEMA_URI}ErrorBody`)!;

  const compiled = new Map<object, ValidateFunction>();
  const validator = (schema: object): ValidateFunction => {
    let v = compiled.get(schema);
    if (!v) compiled.set(schema, (v = ajv.compile(schema)));
    return v;
  };

  return ({ method, route, status, contentType, body }) => {
    if (method === 'HEAD' || method === 'OPTIONS') return undefined;
    // Fastify's `/wishlists/:wishlistId` is OpenAPI's `/wishlists/{wishlistId}`.
    const path = route?.replace(/:(\w+)/g, '{$1}');
    const where = `${method} ${path ?? '(no route)'} -> ${status}`;
    const operation = path === undefined ? undefined : doc.paths[path]?.[method.toLowerCase()];
    let schema: object | undefined;
    if (operation) {
      let response = operation.responses[String(status)];
      if (!response) return `${where}: status ${status} is not documented`;
      if ('$ref' in response) response = doc.components.responses[response.$ref.split('/').pop()!]!;
      schema = response.content?.['application/json']?.schema;
      if (!schema) return body === '' ? undefined : `${where}: a body where the document has none`;
    } else if (status >= 400 && path !== undefined && PAGE_ROUTE.test(path) && contentType?.startsWith('text/html')) {
      return undefined;
    } else if (status >= 400 && path !== undefined && OAUTH_ROUTE.test(path)) {
      schema = OAUTH_ERROR;
    } else if (status >= 400) {
      schema = errorShape.schema as object;
    } else {
      return undefined;
    }
    if (!contentType?.startsWith('application/json')) return `${where}: content type ${contentType}, documented application/json`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return `${where}: not JSON: ${body.slice(0, 200)}`;
    }
    const validate = validator(schema);
    return validate(parsed) ? undefined : `${where}: ${ajv.errorsText(validate.errors)}: ${body.slice(0, 300)}`;
  };
}
