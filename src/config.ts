import { isIP } from 'node:net';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { AuthConfig } from './auth/config.js';
import { LONGEST_ACCESS_TOKEN_SECONDS } from './auth/revocations.js';
import type { DatabaseConfig } from './db/config.js';
import type { MediaStoreConfig } from './media-store/open-media-store.js';

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
  /** PostgreSQL: the longest wait for a connection (a free one, or a new one made). */
  DATABASE_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
  /** The longest a statement may run or wait for a lock (SQLite: its busy timeout). */
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
  /** PostgreSQL: the longest a transaction may sit idle between statements. */
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  /** The bound on `GET /readyz`'s own check of the database. */
  READY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 2_000 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** External OpenID Connect issuer. Setting these three turns the local issuer off. */
  AUTH_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  AUTH_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  AUTH_JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** External issuer: the `typ` header its access tokens must carry (e.g. `at+jwt`); unset, not checked. */
  AUTH_TOKEN_TYPE: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** Local issuer: where its signing key lives (default: DATA_DIR/signing-key.json). */
  SIGNING_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  LOCAL_ISSUER: Type.String({ minLength: 1, default: 'urn:cardshelf:local' }),
  LOCAL_AUDIENCE: Type.String({ minLength: 1, default: 'cardshelf' }),
  /** Signing in (the embedded OAuth server; off with AUTH_ISSUER): token lifetimes in seconds. */
  ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: LONGEST_ACCESS_TOKEN_SECONDS, default: 14_400 }),
  REFRESH_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 3600, default: 7_776_000 }),
  /** How long a rotated refresh token may still be used (concurrent refreshes); after it, a reuse revokes the grant. */
  REFRESH_REUSE_GRACE_SECONDS: Type.Integer({ minimum: 0, maximum: 300, default: 10 }),
  /** How often (ms) an instance reads the tokens revoked by others (src/auth/revocations.ts). */
  TOKEN_REVOCATION_POLL_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 1_000 }),
  /** Who may make an account: nobody but the operator, whoever has an invitation, or anyone. */
  SIGNUP: Type.Union([Type.Literal('closed'), Type.Literal('invite'), Type.Literal('open')], { default: 'invite' }),
  /** Open (unused, unexpired) invitations one member may have at once. */
  INVITATIONS_PER_MEMBER: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  /** Keys of the sign-in cookies, comma-separated, newest first (default: derived from the signing key). */
  SESSION_COOKIE_KEYS: Type.Optional(Type.String({ pattern: '^[^,]{32,}(,[^,]{32,})*$' })),
  /** `{imageId}` is replaced by the URL-encoded image id. */
  GROUP_IMAGE_URL_TEMPLATE: Type.String({
    pattern: '\\{imageId\\}',
    default: 'https://images.cardshelf.invalid/groups/{imageId}',
  }),
  /**
   * Signed media URLs (wishlists, `playable=true` card reads): `{hash}` is replaced by the
   * URL-encoded hash of a `service:#<hash>` or `yoto:#<hash>` reference; the secret is the one the
   * media host checks the signatures with (unset: derived from the local signing key, or with an
   * external issuer kept in DATA_DIR; src/auth/media-url-secret.ts). Unset template: this
   * server's `/media/files/{hash}`.
   */
  MEDIA_URL_TEMPLATE: Type.Optional(Type.String({ pattern: '\\{hash\\}' })),
  MEDIA_URL_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  /**
   * The address clients reach this server at, for the URLs it hands out (upload URLs, signed
   * media URLs, images). Default: http://localhost:<PORT>.
   */
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** Largest audio upload, in bytes (default 1 GiB, as the public service). */
  MEDIA_MAX_AUDIO_BYTES: Type.Integer({ minimum: 1024, default: 1_073_741_824 }),
  /** Largest image upload (cover, icon, family image), in bytes (default 8 MiB). */
  MEDIA_MAX_IMAGE_BYTES: Type.Integer({ minimum: 1024, default: 8_388_608 }),
  /** Bytes of media each user may hold (default 10 GiB); beyond it uploads answer 413. */
  MEDIA_QUOTA_BYTES: Type.Integer({ minimum: 0, default: 10_737_418_240 }),
  /** Transcodes one instance runs at once. */
  MEDIA_TRANSCODE_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  /** Longest audio accepted, in seconds (default 5 hours): longer fails its transcode, checked before decoding. */
  MEDIA_MAX_TRACK_SECONDS: Type.Integer({ minimum: 1, default: 18_000 }),
  /**
   * The wall-clock limit of one transcode: this many seconds, plus MEDIA_TRANSCODE_TIME_PERCENT
   * percent of the audio's duration; ffmpeg is killed at it and the transcode fails.
   */
  MEDIA_TRANSCODE_TIME_MIN_SECONDS: Type.Integer({ minimum: 1, default: 60 }),
  MEDIA_TRANSCODE_TIME_PERCENT: Type.Integer({ minimum: 0, maximum: 1000, default: 25 }),
  /** How long an audio upload URL stays valid, in seconds. */
  MEDIA_UPLOAD_URL_TTL_SECONDS: Type.Integer({ minimum: 10, default: 3600 }),
  /**
   * An S3-compatible object store for media (many instances); unset, the file system under
   * DATA_DIR. Credentials: the two keys, or else the AWS SDK's default chain.
   */
  MEDIA_S3_BUCKET: Type.Optional(Type.String({ minLength: 3, maxLength: 63 })),
  MEDIA_S3_PREFIX: Type.String({ default: '', pattern: '^$|/$' }),
  MEDIA_S3_REGION: Type.String({ minLength: 1, default: 'us-east-1' }),
  MEDIA_S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  MEDIA_S3_FORCE_PATH_STYLE: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  MEDIA_S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  MEDIA_S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** ffmpeg and ffprobe to run (default: the system's, /usr/bin or on PATH). */
  FFMPEG_PATH: Type.Optional(Type.String({ minLength: 1 })),
  /** The system's own, read and not set here: where ffmpeg and ffprobe are looked for. */
  PATH: Type.Optional(Type.String()),
  /** The system's own, read and not set here: a heap size given there is left alone (heap-growth.ts). */
  NODE_OPTIONS: Type.Optional(Type.String()),
  /**
   * Audio already AAC-LC in MP4 within the players' limits is copied, not encoded again (no
   * generation loss; a card that travels between instances keeps its hashes); `false` encodes
   * every upload.
   */
  MEDIA_COPY_COMPATIBLE_AUDIO: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  FFPROBE_PATH: Type.Optional(Type.String({ minLength: 1 })),
  /** Country given to stub families, which no operator has described yet. */
  DEFAULT_COUNTRY: Type.String({ pattern: '^[A-Z]{2}$', default: 'US' }),
  /**
   * How long a whole request may take to arrive, body included: a body that stops short of its
   * Content-Length is cut off (408) after this. Node's own default; audio uploads need it long.
   */
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1_000, maximum: 3_600_000, default: 300_000 }),
  /**
   * Memory for the answers of tagged reads kept by their entity tag (http/answer-cache.ts), in
   * MiB, per process; 0 turns it off.
   */
  ANSWER_CACHE_MB: Type.Integer({ minimum: 0, maximum: 4096, default: 16 }),
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
  /**
   * Fastify's trustProxy: `true` (any peer), or the proxies' addresses or CIDR ranges
   * (comma-separated), whose X-Forwarded-For then names the client.
   */
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  /** Live events (`GET /user/family/events`): seconds between heartbeat comment lines. */
  EVENTS_HEARTBEAT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 15 }),
  /** How long events stay in the log for resuming (seconds; default 24 hours). */
  EVENTS_RETENTION_SECONDS: Type.Integer({ minimum: 1, default: 86_400 }),
  /** Open event streams per user, and in all, on one instance; beyond them 429 with Retry-After. */
  EVENTS_MAX_STREAMS_PER_USER: Type.Integer({ minimum: 1, default: 5 }),
  EVENTS_MAX_STREAMS: Type.Integer({ minimum: 1, default: 10_000 }),
  /** Bytes a stream may have waiting to be sent; a reader slower than that is dropped. */
  EVENTS_STREAM_BUFFER_BYTES: Type.Integer({ minimum: 1024, default: 262_144 }),
  /** SQLite: how often (ms) open streams look for events other processes wrote (`serve --workers`). */
  EVENTS_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 250 }),
  /**
   * How long (ms) an instance waits for an event id that is missing below ids it has read (a
   * write of another family still committing) before it gives it up (it was rolled back). Keep it
   * above the time a transaction may stay open after its event (DATABASE_STATEMENT_TIMEOUT_MS
   * and DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS bound it): an event that commits later still than
   * this reaches no open stream.
   */
  EVENTS_HOLE_GRACE_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
  /**
   * Players a family may register (`POST /device-v2/devices/mine`; beyond it 400 `device-limit`);
   * also the event streams its players may hold together on one instance.
   */
  PLAYERS_MAX_PER_FAMILY: Type.Integer({ minimum: 1, maximum: 10_000, default: 20 }),
  /**
   * The players' MQTT interface (`/mqtt`, modules/players-mqtt): connections one user (or one
   * player) may hold on one instance, topics one connection may subscribe to, the largest
   * message, and publishes a connection may make a second (beyond it, it is disconnected).
   */
  MQTT_MAX_CONNECTIONS_PER_USER: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
  MQTT_MAX_SUBSCRIPTIONS: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  MQTT_MAX_MESSAGE_BYTES: Type.Integer({ minimum: 256, maximum: 1_048_576, default: 16_384 }),
  MQTT_PUBLISHES_PER_SECOND: Type.Integer({ minimum: 1, maximum: 10_000, default: 20 }),
  /**
   * Linked services (modules/links): a remote's answers and media URLs may name private,
   * loopback or link-local addresses only when the remote's own host is one; `true` allows them
   * for every URL (a remote whose media is on the operator's own network).
   */
  LINKS_ALLOW_PRIVATE_NETWORKS: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  /** Pulls and pushes one instance runs at once, and files one job copies at once. */
  LINK_JOBS_PER_INSTANCE: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  LINK_FILES_PER_JOB: Type.Integer({ minimum: 1, maximum: 16, default: 3 }),
  /** A job's lease (seconds): an instance that died leaves its job to another after this. */
  LINK_JOB_LEASE_SECONDS: Type.Integer({ minimum: 2, maximum: 3600, default: 60 }),
  /** How long one call to a remote may take, and one media file's download or upload (seconds). */
  LINK_REMOTE_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 30 }),
  LINK_MEDIA_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 7200, default: 600 }),
});

type Env = Static<typeof EnvSchema>;

export interface LinksConfig {
  allowPrivateNetworks: boolean;
  jobsPerInstance: number;
  filesPerJob: number;
  leaseSeconds: number;
  remoteTimeoutMs: number;
  mediaTimeoutMs: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  database: DatabaseConfig;
  readyTimeoutMs: number;
  logLevel: string;
  auth: AuthConfig;
  /** How often (ms) the list of revoked tokens is read for other instances' revocations. */
  revocationPollMs: number;
  groupImageUrlTemplate: string;
  mediaUrlTemplate: string;
  mediaUrlSecret: string | undefined;
  publicBaseUrl: string;
  media: MediaConfig;
  defaultCountry: string;
  bodyLimit: number;
  /** Bytes of answers kept by their entity tag (0: none). */
  answerCacheBytes: number;
  requestTimeoutMs: number;
  corsOrigin: string[] | '*';
  rateLimitPerMinute: number;
  shutdownDeadlineMs: number;
  /** NODE_OPTIONS, whose heap flags the server's own heap setting gives way to. */
  nodeOptions: string;
  loadShedding: { maxEventLoopDelayMs: number; maxHeapUsedBytes: number };
  metrics: { token: string | undefined; allow: string[] | undefined };
  /** Whose X-Forwarded-For names the client (request.ip): Fastify's trustProxy. */
  trustProxy: boolean | string[];
  events: EventsConfig;
  /** Registered players (modules/devices). */
  players: { maxPerFamily: number };
  /** The players' MQTT interface (modules/players-mqtt). */
  mqtt: MqttConfig;
  /** Linked services (modules/links). */
  links: LinksConfig;
  signIn: {
    accessTokenTtlSeconds: number;
    refreshTokenTtlSeconds: number;
    refreshReuseGraceSeconds: number;
    cookieKeys: string[] | undefined;
    signup: 'closed' | 'invite' | 'open';
    invitationsPerMember: number;
  };
}

export interface MediaConfig extends MediaStoreConfig {
  maxAudioBytes: number;
  maxImageBytes: number;
  quotaBytes: number;
  transcodeConcurrency: number;
  /** See TranscodeLimits (modules/media/transcode-worker.ts). */
  transcodeLimits: { maxTrackSeconds: number; timeLimitMinSeconds: number; timeLimitPercent: number };
  uploadUrlTtlSeconds: number;
  ffmpegPath: string | undefined;
  /** Where the system's ffmpeg and ffprobe are looked for besides /usr/bin (PATH). */
  searchPath: string;
  /** Copy audio already in the players' form instead of encoding it (MEDIA_COPY_COMPATIBLE_AUDIO). */
  copyCompatibleAudio: boolean;
  ffprobePath: string | undefined;
}

/** Live events: see EVENTS_* above (modules/events/hub.ts). */
export interface EventsConfig {
  heartbeatMs: number;
  retentionMs: number;
  maxStreamsPerUser: number;
  maxStreams: number;
  /** Streams a family's players hold together: one for each player the family may have. */
  maxPlayerStreamsPerFamily: number;
  streamBufferBytes: number;
  pollMs: number;
  /** See EVENTS_HOLE_GRACE_MS (modules/events/log-follower.ts). */
  holeGraceMs: number;
}

/** See MQTT_* above. */
export interface MqttConfig {
  maxConnectionsPerUser: number;
  maxSubscriptions: number;
  maxMessageBytes: number;
  publishesPerSecond: number;
}

export class ConfigError extends Error {}

const NUMERIC_KEYS = new Set(
  Object.entries(EnvSchema.properties)
    .filter(([, schema]) => schema.type === 'integer')
    .map(([key]) => key),
);

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

/**
 * The settings, section by section. The sections that refuse a combination of settings are read
 * first, in this order: with several wrong, the one named is always the same.
 */
function fromEnv(env: Env): Config {
  const dataDir = path.resolve(env.DATA_DIR);
  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '');
  const auth = authOf(env, dataDir, publicBaseUrl);
  const metrics = metricsOf(env);
  const trustProxy = trustProxyOf(env.TRUST_PROXY);
  const media = mediaOf(env, dataDir);
  return {
    port: env.PORT,
    host: env.HOST,
    dataDir,
    database: databaseOf(env, dataDir),
    readyTimeoutMs: env.READY_TIMEOUT_MS,
    logLevel: env.LOG_LEVEL,
    auth,
    revocationPollMs: env.TOKEN_REVOCATION_POLL_MS,
    groupImageUrlTemplate: env.GROUP_IMAGE_URL_TEMPLATE,
    // Unset, signed media URLs point at this server's own media route.
    mediaUrlTemplate: env.MEDIA_URL_TEMPLATE ?? `${publicBaseUrl}/media/files/{hash}`,
    mediaUrlSecret: env.MEDIA_URL_SECRET,
    publicBaseUrl,
    media,
    defaultCountry: env.DEFAULT_COUNTRY,
    bodyLimit: env.BODY_LIMIT,
    answerCacheBytes: env.ANSWER_CACHE_MB * 1024 * 1024,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    corsOrigin:
      env.CORS_ORIGIN.trim() === '*'
        ? '*'
        : env.CORS_ORIGIN.split(',').map((o) => o.trim()).filter(Boolean),
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    shutdownDeadlineMs: env.SHUTDOWN_DEADLINE_MS,
    nodeOptions: env.NODE_OPTIONS ?? '',
    loadShedding: {
      maxEventLoopDelayMs: env.LOAD_SHED_EVENT_LOOP_DELAY_MS,
      maxHeapUsedBytes: env.LOAD_SHED_HEAP_USED_BYTES,
    },
    metrics,
    trustProxy,
    events: eventsOf(env),
    players: { maxPerFamily: env.PLAYERS_MAX_PER_FAMILY },
    mqtt: mqttOf(env),
    links: linksOf(env),
    signIn: signInOf(env),
  };
}

/** The external issuer when its three settings are given (none or all), else the local one. */
function authOf(env: Env, dataDir: string, publicBaseUrl: string): AuthConfig {
  const oidc = [env.AUTH_ISSUER, env.AUTH_AUDIENCE, env.AUTH_JWKS_URL];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    throw new ConfigError(
      'invalid configuration: AUTH_ISSUER, AUTH_AUDIENCE and AUTH_JWKS_URL go together',
    );
  }
  return env.AUTH_ISSUER && env.AUTH_AUDIENCE && env.AUTH_JWKS_URL
    ? { mode: 'oidc', issuer: env.AUTH_ISSUER, audience: env.AUTH_AUDIENCE, jwksUrl: env.AUTH_JWKS_URL, tokenType: env.AUTH_TOKEN_TYPE }
    : {
        mode: 'local',
        issuer: env.LOCAL_ISSUER,
        audience: env.LOCAL_AUDIENCE,
        keyFile: path.resolve(env.SIGNING_KEY_FILE ?? path.join(dataDir, 'signing-key.json')),
        signInIssuer: publicBaseUrl,
      };
}

/** METRICS_TOKEN and METRICS_ALLOW: the addresses and ranges are checked here. */
function metricsOf(env: Env): Config['metrics'] {
  const metricsAllow = env.METRICS_ALLOW?.split(',').map((a) => a.trim()).filter(Boolean);
  const badRanges = (metricsAllow ?? []).filter((entry) => !isAddressOrRange(entry));
  if (badRanges.length > 0) {
    throw new ConfigError(`invalid configuration: METRICS_ALLOW: not an address or CIDR range: ${badRanges.join(', ')}`);
  }
  return {
    token: env.METRICS_TOKEN,
    allow: metricsAllow,
  };
}

/** PostgreSQL when DATABASE_URL is given, else SQLite in DATA_DIR. */
function databaseOf(env: Env, dataDir: string): DatabaseConfig {
  return env.DATABASE_URL
    ? {
        kind: 'postgres',
        url: env.DATABASE_URL,
        poolSize: env.DATABASE_POOL_SIZE,
        connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
        statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
        idleInTransactionTimeoutMs: env.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      }
    : {
        kind: 'sqlite',
        file: path.join(dataDir, 'cardshelf.db'),
        statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      };
}

/** Media: where it is stored (DATA_DIR, or an S3 bucket), its limits, and the transcoder. */
function mediaOf(env: Env, dataDir: string): MediaConfig {
  if (Boolean(env.MEDIA_S3_ACCESS_KEY_ID) !== Boolean(env.MEDIA_S3_SECRET_ACCESS_KEY)) {
    throw new ConfigError('invalid configuration: MEDIA_S3_ACCESS_KEY_ID and MEDIA_S3_SECRET_ACCESS_KEY go together');
  }
  return {
    dir: path.join(dataDir, 'media'),
    s3: env.MEDIA_S3_BUCKET
      ? {
          bucket: env.MEDIA_S3_BUCKET,
          prefix: env.MEDIA_S3_PREFIX,
          region: env.MEDIA_S3_REGION,
          endpoint: env.MEDIA_S3_ENDPOINT,
          forcePathStyle: env.MEDIA_S3_FORCE_PATH_STYLE === 'true',
          credentials:
            env.MEDIA_S3_ACCESS_KEY_ID && env.MEDIA_S3_SECRET_ACCESS_KEY
              ? { accessKeyId: env.MEDIA_S3_ACCESS_KEY_ID, secretAccessKey: env.MEDIA_S3_SECRET_ACCESS_KEY }
              : undefined,
        }
      : undefined,
    maxAudioBytes: env.MEDIA_MAX_AUDIO_BYTES,
    maxImageBytes: env.MEDIA_MAX_IMAGE_BYTES,
    quotaBytes: env.MEDIA_QUOTA_BYTES,
    transcodeConcurrency: env.MEDIA_TRANSCODE_CONCURRENCY,
    transcodeLimits: {
      maxTrackSeconds: env.MEDIA_MAX_TRACK_SECONDS,
      timeLimitMinSeconds: env.MEDIA_TRANSCODE_TIME_MIN_SECONDS,
      timeLimitPercent: env.MEDIA_TRANSCODE_TIME_PERCENT,
    },
    uploadUrlTtlSeconds: env.MEDIA_UPLOAD_URL_TTL_SECONDS,
    ffmpegPath: env.FFMPEG_PATH,
    searchPath: env.PATH ?? '',
    copyCompatibleAudio: env.MEDIA_COPY_COMPATIBLE_AUDIO === 'true',
    ffprobePath: env.FFPROBE_PATH,
  };
}

function eventsOf(env: Env): EventsConfig {
  return {
    heartbeatMs: env.EVENTS_HEARTBEAT_SECONDS * 1000,
    retentionMs: env.EVENTS_RETENTION_SECONDS * 1000,
    maxStreamsPerUser: env.EVENTS_MAX_STREAMS_PER_USER,
    maxStreams: env.EVENTS_MAX_STREAMS,
    maxPlayerStreamsPerFamily: env.PLAYERS_MAX_PER_FAMILY,
    streamBufferBytes: env.EVENTS_STREAM_BUFFER_BYTES,
    pollMs: env.EVENTS_POLL_MS,
    holeGraceMs: env.EVENTS_HOLE_GRACE_MS,
  };
}

function mqttOf(env: Env): MqttConfig {
  return {
    maxConnectionsPerUser: env.MQTT_MAX_CONNECTIONS_PER_USER,
    maxSubscriptions: env.MQTT_MAX_SUBSCRIPTIONS,
    maxMessageBytes: env.MQTT_MAX_MESSAGE_BYTES,
    publishesPerSecond: env.MQTT_PUBLISHES_PER_SECOND,
  };
}

function linksOf(env: Env): LinksConfig {
  return {
    allowPrivateNetworks: env.LINKS_ALLOW_PRIVATE_NETWORKS === 'true',
    jobsPerInstance: env.LINK_JOBS_PER_INSTANCE,
    filesPerJob: env.LINK_FILES_PER_JOB,
    leaseSeconds: env.LINK_JOB_LEASE_SECONDS,
    remoteTimeoutMs: env.LINK_REMOTE_TIMEOUT_SECONDS * 1000,
    mediaTimeoutMs: env.LINK_MEDIA_TIMEOUT_SECONDS * 1000,
  };
}

function signInOf(env: Env): Config['signIn'] {
  return {
    accessTokenTtlSeconds: env.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: env.REFRESH_TOKEN_TTL_SECONDS,
    refreshReuseGraceSeconds: env.REFRESH_REUSE_GRACE_SECONDS,
    cookieKeys: env.SESSION_COOKIE_KEYS?.split(','),
    signup: env.SIGNUP,
    invitationsPerMember: env.INVITATIONS_PER_MEMBER,
  };
}

/** TRUST_PROXY: unset (no proxy), `true`, or addresses and CIDR ranges. */
function trustProxyOf(value: string | undefined): Config['trustProxy'] {
  const text = value?.trim();
  if (!text || text === 'false') return false;
  if (text === 'true') return true;
  const entries = text.split(',').map((a) => a.trim()).filter(Boolean);
  const bad = entries.filter((entry) => !isAddressOrRange(entry));
  if (bad.length > 0) {
    throw new ConfigError(`invalid configuration: TRUST_PROXY: true, or addresses and CIDR ranges; not: ${bad.join(', ')}`);
  }
  return entries;
}

/** `127.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
