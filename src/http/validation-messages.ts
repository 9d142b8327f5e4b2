import type { FastifySchemaValidationError, FastifyServerOptions } from 'fastify';

/** Where the error is: `body`, `params`, `querystring` or `headers`. */
type SchemaErrorDataVar = Parameters<NonNullable<FastifyServerOptions['schemaErrorFormatter']>>[1];

/**
 * The message of a 400 for a request the schemas refuse: Fastify's own words (`body/title must
 * be string`), but where Ajv's would not say what to change: a field the schema does not take is
 * named, and a value outside a list (a command's name) is answered with the list.
 */
export function validationError(errors: FastifySchemaValidationError[], dataVar: SchemaErrorDataVar): Error {
  return new Error(errors.map((e) => messageOf(e, dataVar)).join(', '));
}

function messageOf(error: FastifySchemaValidationError, dataVar: SchemaErrorDataVar): string {
  const at = `${dataVar}${error.instancePath}`;
  const { params } = error;
  if (error.keyword === 'additionalProperties') return `${at} has a field it does not take: '${String(params.additionalProperty)}'`;
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    return `${at} must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `${at} ${error.message ?? 'is not valid'}`;
}
