/**
 * The logger a service may write to: pino's calling convention (an object of fields, then the
 * message), which Fastify's request and app loggers follow. Services take this, not Fastify's
 * type, so they stay free of the web framework.
 */
export interface Log {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
  child(bindings: Record<string, unknown>): Log;
}
