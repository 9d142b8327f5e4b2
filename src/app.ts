import { readFileSync } from 'node:fs';
import cors from '@fastify/cors';
import { Type } from '@sinclair/typebox';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyReply } from 'fastify';
import authPlugin from './auth/plugin.js';
import { createVerifier, type TokenVerifier } from './auth/verifier.js';
import type { Config } from './config.js';
import type { Store } from './db/dialect.js';
import { checkReadiness } from './db/readiness.js';
import { openStore } from './db/store.js';
import { cardRoutes } from './modules/cards/routes.js';
import { Card, CardSummary } from './modules/cards/schemas.js';
import { createCardService } from './modules/cards/service.js';
import { familyRoutes } from './modules/families/routes.js';
import { Family } from './modules/families/schemas.js';
import { createFamilyService } from './modules/families/service.js';
import { groupRoutes } from './modules/groups/routes.js';
import { Group } from './modules/groups/schemas.js';
import { createGroupService } from './modules/groups/service.js';
import { libraryRoutes } from './modules/library/routes.js';
import { LibraryRecord } from './modules/library/schemas.js';
import { createLibraryService } from './modules/library/service.js';
import { wishlistRoutes } from './modules/wishlists/routes.js';
import { Wishlist } from './modules/wishlists/schemas.js';
import { createMediaUrlSigner } from './modules/media/media-urls.js';
import { createMedia } from './modules/media/media.js';
import { createMediaReadRights } from './modules/media/read-rights.js';
import { mediaRoutes } from './modules/media/routes.js';
import { createTrackMediaFiller } from './modules/media/track-media.js';
import { createWishlistService } from './modules/wishlists/service.js';
import { answerProtocolErrors, clientError, createErrorHandler, methodAwareNotFound } from './http/error-handler.js';
import { registerJsonParser } from './http/json-body.js';
import { ErrorBody, ErrorRef, MAX_PATH_ID_LENGTH, StatusOk } from './shared/schemas.js';
import type { App } from './http/route-app.js';
import { migrateToLatest } from './db/migrate.js';
import { admitUnderPressure, registerLoadShedding } from './http/load-shedding.js';
import { createMetrics, registerMetrics } from './http/metrics.js';
import { transcodeQueueDepth } from './modules/media/queries.js';
import { describeRoutes, documentOptions, finishDocument } from './http/openapi.js';
import { transferRoutes } from './transfer/routes.js';
import { createTransferService } from './transfer/service.js';
import { echoRequestId, requestId } from './http/request-id.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { createTagger } from './shared/entity-tag.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerBodyTags } from './http/conditional.js';
import { registerSignIn } from './oauth/plugin.js';

const RELEASE = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The local issuer's public keys (RFC 7517); the key members are the JWK's own. */
const Jwks = Type.Object({ keys: Type.Array(Type.Object({ kid: Type.String(), kty: Type.String() }, { additionalProperties: true })) });


export interface AppOptions {
  /** Use this store instead of opening the configured one (it is then not closed with the app). */
  store?: Store;
  /** Apply pending migrations before serving (default true). */
  migrate?: boolean;
}

/**
 * Builds the whole application from a config: every Fastify, validator and plugin option lives
 * here, so tests and production run the same app. It never listens.
 */
export async function buildApp(config: Readonly<Config>, opts: AppOptions = {}): Promise<App> {
  const opened = opts.store ?? openStore(config.database);
  if (opts.migrate !== false) await migrateToLatest(opened);
  const { registry, dbPlugin } = createMetrics(opened, { transcodeQueue: () => transcodeQueueDepth(opened.db) });
  // What the services use: the same connections, every query timed for the metrics.
  const store: Store = { ...opened, db: opened.db.withPlugin(dbPlugin) };
  const verifier: TokenVerifier = await createVerifier(config.auth);

  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization'],
    },
    // One log line a request (below, when it is answered) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    // Request ids are UUIDs, or the caller's x-request-id when well-formed (src/http/request-id.ts).
    requestIdHeader: false,
    genReqId: requestId,
    return503OnClosing: true,
    // A request must arrive whole within this time: a body that stops short of its
    // Content-Length would otherwise hold its connection open forever. Node then answers 408
    // (through clientErrorHandler), checking every second instead of every 30 seconds; it only
    // applies requestTimeout when headersTimeout is not longer.
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: 10_000, connectionsCheckingInterval: 1000, requireHostHeader: false },
    // A base URL configured with a trailing slash gives `//content/mine`; answer it anyway.
    routerOptions: {
      ignoreTrailingSlash: true,
      ignoreDuplicateSlashes: true,
      // Fastify's default (100) would refuse ids of 101 to 128 characters with a 400 before the
      // token is even checked; they are unknown ids, so 401 or 404 like any other (docs/api.md).
      maxParamLength: MAX_PATH_ID_LENGTH,
    },
    // Requests Node's HTTP parser refuses get the documented error shape too.
    clientErrorHandler: clientError,
    // Errors raised before routing (a malformed URL) get the documented shape too.
    frameworkErrors: (error, _req, reply) => {
      (reply as FastifyReply).code(400).send({ error: { code: 'bad-request', message: error.message } });
    },
    ajv: {
      customOptions: {
        // A wrong type is the caller's mistake to hear about, not to have silently converted.
        coerceTypes: false,
        // Unknown fields are kept (cards and wishlist elements store them as sent).
        removeAdditional: false,
        useDefaults: true,
        allErrors: false,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (!opts.store) app.addHook('onClose', async () => opened.db.destroy());
  echoRequestId(app);
  if (config.logLevel === 'debug' || config.logLevel === 'trace') {
    // When a request starts, for tracing a request that hangs (only registered when wanted).
    app.addHook('onRequest', async (request) => {
      request.log.debug({ method: request.method, url: request.url }, 'request received');
    });
  }
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime },
      'request completed',
    );
  });

  for (const schema of [ErrorBody, Card, CardSummary, Family, LibraryRecord, Group, Wishlist]) {
    app.addSchema(schema);
  }
  // Only JSON bodies are accepted: without its parser, text/plain is refused like any other type.
  app.removeContentTypeParser('text/plain');
  registerJsonParser(app);
  app.setErrorHandler(createErrorHandler());
  answerProtocolErrors(app);

  // Collects every route from here on (the docs' included), for 405 answers with `Allow`.
  const notFound = methodAwareNotFound(app);
  registerMetrics(app, registry, config.metrics);

  registerSecurityHeaders(app);
  await registerLoadShedding(app, config.loadShedding);
  await app.register(cors, {
    origin: config.corsOrigin === '*' ? '*' : config.corsOrigin,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    // Request headers (If-None-Match, If-Match, Idempotency-Key, ...) are allowed as the preflight
    // asks for them; these answer headers are shown to scripts besides the CORS-safelisted ones.
    exposedHeaders: ['ETag', 'Idempotent-Replayed', 'Retry-After', 'x-request-id'],
    // A bare OPTIONS (no Origin or no Access-Control-Request-Method) would otherwise get a
    // text/plain 400, outside the error shape; it is answered like a preflight instead.
    strictPreflight: false,
  });
  if (config.rateLimitPerMinute > 0) {
    await app.register(rateLimit, { max: config.rateLimitPerMinute, timeWindow: '1 minute' });
  }
  // Before any route: it completes each one's schema as it is added.
  app.addHook('onRoute', describeRoutes(config));
  await app.register(swagger, {
    openapi: documentOptions(config),
    transformObject: finishDocument,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(authPlugin, { verifier });
  // Entity tags name the data an answer shows and what else shapes it: the release (its
  // rendering) and the URLs answers are built with (signed answers add the signing key's id).
  const tagger = createTagger([RELEASE, config.publicBaseUrl, config.groupImageUrlTemplate]);
  const families = createFamilyService(store, config, tagger);
  await registerSignIn(app, store, config, families);
  registerIdempotency(app, store);
  registerBodyTags(app);
  app.setNotFoundHandler(notFound);

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get(
    '/healthz',
    // Liveness: an overloaded process is alive, and restarting it would only lose its work.
    {
      schema: { tags: ['operations'], summary: 'The process is up', response: { 200: StatusOk } },
      config: { pressureHandler: admitUnderPressure },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'The database answers and accepts writes',
        description: `503 \`unavailable\` (with \`Retry-After\`) when the database does not answer within ${config.readyTimeoutMs} ms, refuses writes, or its file is no longer where it was opened.`,
        response: { 200: StatusOk, 503: ErrorRef },
      },
    },
    async () => {
      const readiness = await checkReadiness(store, config.readyTimeoutMs);
      if (!readiness.ready) throw readiness.failure;
      return { status: 'ok' as const };
    },
  );
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['operations'],
        summary: "The local token issuer's public keys",
        description: 'A JSON Web Key Set; 404 when tokens come from an external issuer (its own keys are at its JWKS URL).',
        response: { 200: Jwks, 404: ErrorRef },
      },
    },
    async (_req, reply) =>
      verifier.jwks ??
      reply.code(404).send({ error: { code: 'not-found', message: 'tokens are issued by an external issuer' } }),
  );

  const signer = createMediaUrlSigner(config.mediaUrlTemplate, config.mediaUrlSecret);
  const media = createMedia(store, config, signer, app.log);
  app.addHook('preClose', () => media.close());
  await app.register(mediaRoutes, { ...media, families });
  const cards = createCardService(store, families, tagger, createTrackMediaFiller());
  const rights = createMediaReadRights(store, families);
  await app.register(cardRoutes, { cards, media: signer, rights, tagger });
  await app.register(familyRoutes, { families });
  await app.register(transferRoutes, { transfer: createTransferService(store, media.mediaStore, families) });
  const groups = createGroupService(store, families, config, tagger);
  await app.register(libraryRoutes, { library: createLibraryService(store, families, groups, tagger) });
  await app.register(groupRoutes, { groups });
  await app.register(wishlistRoutes, {
    wishlists: createWishlistService(store, tagger),
    media: signer,
    rights,
    tagger,
  });

  return app;
}
