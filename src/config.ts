import { isIP } from 'node:net';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * The process environment, described once. Every setting is read here, at start-up, validated,
 * and handed on as a frozen `Config`; nothing else in `src/` reads `process.env`.
 */
const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  /** postgres://... switches the store to PostgreSQL; without it, SQLite in DATA_DIR. */
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** External OpenID Connect issuer. Setting these three turns the local issuer off. */
  AUTH_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  AUTH_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  AUTH_JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** Local issuer: where its signing key lives (default: DATA_DIR/signing-key.json). */
  SIGNING_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  LOCAL_ISSUER: Type.String({ minLength: 1, default: 'urn:cardshelf:local' }),
  LOCAL_AUDIENCE: Type.String({ minLength: 1, default: 'cardshelf' }),
  /** `{imageId}` is replaced by the URL-encoded image id. */
  GROUP_IMAGE_URL_TEMPLATE: Type.String({
    pattern: '\\{imageId\\}',
    default: 'https://images.cardshelf.invalid/groups/{imageId}',
  }),
  /**
   * Signed media URLs in wishlist answers (without `format=raw`): `{hash}` is replaced by the
   * URL-encoded hash of a `service:#<hash>` reference; the secret is the one the media host checks
   * the signatures with (unset: a random one for each process).
   */
  MEDIA_URL_TEMPLATE: Type.String({ pattern: '\\{hash\\}', default: 'https://media.cardshelf.invalid/{hash}' }),
  MEDIA_URL_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  /** Country given to stub families, which no operator has described yet. */
  DEFAULT_COUNTRY: Type.String({ pattern: '^[A-Z]{2}$', default: 'US' }),
  /** Largest accepted request body, in bytes (wishlists have their own, smaller, rule). */
  BODY_LIMIT: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  /** Comma-separated list of allowed CORS origins, or `*`. */
  CORS_ORIGIN: Type.String({ default: '*' }),
  /** Requests per minute per caller; 0 turns rate limiting off. */
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, default: 0 }),
  /** After SIGTERM, how long requests in flight may take before the process exits 1 anyway. */
  SHUTDOWN_DEADLINE_MS: Type.Integer({ minimum: 1, default: 30_000 }),
  /**
   * Load shedding: 503 while the event loop lags more than this (ms, the mean of each second);
   * 0 turns it off. Off by default: the second of start-up (module loading, migrations) would
   * already count as lag. The container image sets 1000.
   */
  LOAD_SHED_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 0 }),
  /** Load shedding: 503 while the heap in use exceeds this (bytes); 0 turns it off. */
  LOAD_SHED_HEAP_USED_BYTES: Type.Integer({ minimum: 0, default: 0 }),
  /** GET /metrics needs `Authorization: Bearer <this>` when set. */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** GET /metrics only from these client addresses or CIDR ranges (comma-separated) when set. */
  METRICS_ALLOW: Type.Optional(Type.String({ minLength: 1 })),
});

type Env = Static<typeof EnvSchema>;

export type AuthConfig =
  | { mode: 'local'; issuer: string; audience: string; keyFile: string }
  | { mode: 'oidc'; issuer: string; audience: string; jwksUrl: string };

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  database:
    | { kind: 'sqlite'; file: string }
    | { kind: 'postgres'; url: string; poolSize: number };
  logLevel: string;
  auth: AuthConfig;
  groupImageUrlTemplate: string;
  mediaUrlTemplate: string;
  mediaUrlSecret: string | undefined;
  defaultCountry: string;
  bodyLimit: number;
  corsOrigin: string[] | '*';
  rateLimitPerMinute: number;
  shutdownDeadlineMs: number;
  loadShedding: { maxEventLoopDelayMs: number; maxHeapUsedBytes: number };
  metrics: { token: string | undefined; allow: string[] | undefined };
}

export class ConfigError extends Error {}

const NUMERIC_KEYS = new Set([
  'PORT',
  'DATABASE_POOL_SIZE',
  'BODY_LIMIT',
  'RATE_LIMIT_PER_MINUTE',
  'SHUTDOWN_DEADLINE_MS',
  'LOAD_SHED_EVENT_LOOP_DELAY_MS',
  'LOAD_SHED_HEAP_USED_BYTES',
]);

/** Reads and validates the environment. Throws ConfigError naming every bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key];
    if (value === undefined || value === '') continue;
    raw[key] = NUMERIC_KEYS.has(key) && /^\d+$/.test(value) ? Number(value) : value;
  }
  const withDefaults = Value.Default(EnvSchema, raw);
  const errors = [...Value.Errors(EnvSchema, withDefaults)];
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.path.slice(1) || '(env)'}: ${e.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return Object.freeze(fromEnv(withDefaults as Env));
}

function fromEnv(env: Env): Config {
  const dataDir = path.resolve(env.DATA_DIR);
  const oidc = [env.AUTH_ISSUER, env.AUTH_AUDIENCE, env.AUTH_JWKS_URL];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    throw new ConfigError(
      'invalid configuration: AUTH_ISSUER, AUTH_AUDIENCE and AUTH_JWKS_URL go together',
    );
  }
  const metricsAllow = env.METRICS_ALLOW?.split(',').map((a) => a.trim()).filter(Boolean);
  const badRanges = (metricsAllow ?? []).filter((entry) => !isAddressOrRange(entry));
  if (badRanges.length > 0) {
    throw new ConfigError(`invalid configuration: METRICS_ALLOW: not an address or CIDR range: ${badRanges.join(', ')}`);
  }
  const auth: AuthConfig =
    env.AUTH_ISSUER && env.AUTH_AUDIENCE && env.AUTH_JWKS_URL
      ? { mode: 'oidc', issuer: env.AUTH_ISSUER, audience: env.AUTH_AUDIENCE, jwksUrl: env.AUTH_JWKS_URL }
      : {
          mode: 'local',
          issuer: env.LOCAL_ISSUER,
          audience: env.LOCAL_AUDIENCE,
          keyFile: path.resolve(env.SIGNING_KEY_FILE ?? path.join(dataDir, 'signing-key.json')),
        };
  return {
    port: env.PORT,
    host: env.HOST,
    dataDir,
    database: env.DATABASE_URL
      ? { kind: 'postgres', url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }
      : { kind: 'sqlite', file: path.join(dataDir, 'cardshelf.db') },
    logLevel: env.LOG_LEVEL,
    auth,
    groupImageUrlTemplate: env.GROUP_IMAGE_URL_TEMPLATE,
    mediaUrlTemplate: env.MEDIA_URL_TEMPLATE,
    mediaUrlSecret: env.MEDIA_URL_SECRET,
    defaultCountry: env.DEFAULT_COUNTRY,
    bodyLimit: env.BODY_LIMIT,
    corsOrigin:
      env.CORS_ORIGIN.trim() === '*'
        ? '*'
        : env.CORS_ORIGIN.split(',').map((o) => o.trim()).filter(Boolean),
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    shutdownDeadlineMs: env.SHUTDOWN_DEADLINE_MS,
    loadShedding: {
      maxEventLoopDelayMs: env.LOAD_SHED_EVENT_LOOP_DELAY_MS,
      maxHeapUsedBytes: env.LOAD_SHED_HEAP_USED_BYTES,
    },
    metrics: {
      token: env.METRICS_TOKEN,
      allow: metricsAllow,
    },
  };
}

/** `127.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
