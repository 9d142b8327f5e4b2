import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { readFileSync } from 'node:fs';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyReply } from 'fastify';
import type { Registry } from 'prom-client';
import { createAccountService } from './accounts/service.js';
import authPlugin from './auth/plugin.js';
import { principalStandsCheck, type PrincipalStands } from './auth/principal-stands.js';
import { instanceSecret } from './auth/media-url-secret.js';
import { createRevocations, NO_REVOCATIONS } from './auth/revocations.js';
import { createVerifier, type TokenVerifier } from './auth/verifier.js';
import { createPlayersMqtt } from './modules/players-mqtt/broker.js';
import type { Config } from './config.js';
import type { Store } from './db/dialect.js';
import { migrateToLatest } from './db/migrate.js';
import { openStore } from './db/store.js';
import { registerAnswerCache } from './http/answer-cache.js';
import { registerBodyTags } from './http/conditional.js';
import { registerCors } from './http/cross-origin.js';
import { clientError, methodAwareNotFound, registerErrorAnswers } from './http/error-handler.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerJsonParser } from './http/json-body.js';
import { registerLoadShedding } from './http/load-shedding.js';
import { createMetrics, registerMetrics } from './http/metrics.js';
import { registerApiDocument } from './http/openapi.js';
import { registerOperationRoutes } from './http/operations.js';
import { registerRateLimit } from './http/rate-limit.js';
import { requestId } from './http/request-id.js';
import { registerRequestLog } from './http/request-log.js';
import { buildSerializer } from './http/response-serializers.js';
import type { App } from './http/route-app.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { validationError } from './http/validation-messages.js';
import { registerWebApp } from './http/web-app.js';
import { cardRoutes } from './modules/cards/routes.js';
import { Card, CardSummary } from './modules/cards/schemas.js';
import { createCardService } from './modules/cards/service.js';
import { playerCredentialCheck } from './modules/devices/credentials.js';
import { deviceRoutes } from './modules/devices/routes.js';
import { DEVICE_COMMAND_SCHEMAS, Device, DeviceCommand, DeviceStatus } from './modules/devices/schemas.js';
import { createDeviceService } from './modules/devices/service.js';
import { createPlayerCredentialIssuer } from './auth/player-credential.js';
import { LIVE_EVENT_COMPONENTS } from './modules/events/catalogue.js';
import { createEventHub } from './modules/events/hub.js';
import { eventRoutes } from './modules/events/routes.js';
import { familyRoutes } from './modules/families/routes.js';
import { Family, NamedMember } from './modules/families/schemas.js';
import { createFamilyService, type FamilyService } from './modules/families/service.js';
import { groupRoutes } from './modules/groups/routes.js';
import { Group } from './modules/groups/schemas.js';
import { createGroupService } from './modules/groups/service.js';
import { libraryRoutes } from './modules/library/routes.js';
import { LibraryRecord } from './modules/library/schemas.js';
import { createLibraryService } from './modules/library/service.js';
import { createMedia } from './modules/media/media.js';
import { transcodeQueueDepth } from './modules/media/queries.js';
import { createMediaReadRights } from './modules/media/read-rights.js';
import { createSignedAnswers } from './modules/media/signed-answers.js';
import { iconJsonRoutes, mediaRoutes } from './modules/media/routes.js';
import { createTrackMediaFiller } from './modules/media/track-media.js';
import { createLinks } from './modules/links/links.js';
import { linkRoutes } from './modules/links/routes.js';
import { Job as LinkJob, Link } from './modules/links/schemas.js';
import { wishlistRoutes } from './modules/wishlists/routes.js';
import { Wishlist } from './modules/wishlists/schemas.js';
import { createWishlistService } from './modules/wishlists/service.js';
import { createTagger, type Tagger } from './shared/entity-tag.js';
import { ErrorBody, MAX_PATH_ID_LENGTH } from './shared/schemas.js';
import { transferRoutes } from './transfer/routes.js';
import { createTransferService } from './transfer/service.js';
import { registerSignIn } from './oauth/plugin.js';

const RELEASE = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface AppOptions {
  /** Use this store instead of opening the configured one (it is then not closed with the app). */
  store?: Store;
  /** Apply pending migrations before serving (default true). */
  migrate?: boolean;
}

/**
 * Builds the whole application from a config, so tests and production run the same app. It
 * never listens. The steps run in this order because hooks of one kind run in the order they
 * were added, and hooks on routes (onRoute) only see the routes added after them.
 */
export async function buildApp(config: Readonly<Config>, opts: AppOptions = {}): Promise<App> {
  const { store, registry, unwatchStatements } = await openMeasuredStore(config, opts);
  const app = createFastify(config);
  // Only the local issuer's tokens are revoked here (an external issuer revokes its own).
  const revocations = config.auth.mode === 'local' ? await createRevocations(store, { pollMs: config.revocationPollMs, log: app.log }) : NO_REVOCATIONS;
  const verifier = await createVerifier(config.auth, revocations);
  app.addHook('onClose', async () => {
    revocations.close();
    unwatchStatements();
    if (!opts.store) await store.db.destroy();
  });

  registerRequestLog(app, config.logLevel);
  addSharedSchemas(app);
  registerJsonParser(app);
  registerErrorAnswers(app);
  // Collects every route from here on (the docs' included), for 405 answers with `Allow`.
  const notFound = methodAwareNotFound(app);
  registerMetrics(app, registry, config.metrics);
  registerSecurityHeaders(app, config);
  await registerLoadShedding(app, config.loadShedding);
  await registerCors(app, config.corsOrigin);
  await registerRateLimit(app, config.rateLimitPerMinute);
  await registerApiDocument(app, config);
  const playerCredentialStands = playerCredentialCheck(store);
  await app.register(authPlugin, { verifier, playerCredentialStands });
  // The one check of a token that outlives a request (event streams, at each heartbeat).
  const accounts = createAccountService(store);
  const principalStands = principalStandsCheck({ isRevoked: (principal) => revocations.isRevoked(principal), playerCredentialStands, accountDisabled: (userId) => accounts.isDisabled(userId) });
  // Entity tags name the data an answer shows and what else shapes it: the release (its
  // rendering) and the URLs answers are built with (signed answers add the signing key's id).
  const tagger = createTagger([RELEASE, config.publicBaseUrl, config.groupImageUrlTemplate]);
  const families = createFamilyService(store, config, tagger);
  // Before the API's own request hooks: the sign-in pages and endpoints answer as OAuth says.
  await registerSignIn(app, store, config, { families, verifier });
  registerIdempotency(app, store);
  registerBodyTags(app);
  registerAnswerCache(app, config.answerCacheBytes);
  app.setNotFoundHandler(notFound);

  registerOperationRoutes(app, { store, verifier, readyTimeoutMs: config.readyTimeoutMs });
  await registerResources(app, config, store, { tagger, families, principalStands, verifier });
  await registerWebApp(app);
  return app;
}

/**
 * The configured store (or the one given), migrated unless told not to, with every statement
 * timed for the metrics where the driver runs it (db/statement-watch.ts); `unwatchStatements`
 * stops that when the app closes (a store given by the caller outlives the app).
 */
async function openMeasuredStore(
  config: Readonly<Config>,
  opts: AppOptions,
): Promise<{ store: Store; registry: Registry; unwatchStatements: () => void }> {
  const store = opts.store ?? openStore(config.database);
  if (opts.migrate !== false) await migrateToLatest(store);
  const { registry, observeStatement } = createMetrics(store, { transcodeQueue: () => transcodeQueueDepth(store.db) });
  return { store, registry, unwatchStatements: store.dialect.watchStatements(observeStatement) };
}

/** Fastify with every server, router and validator option of the app. */
function createFastify(config: Readonly<Config>): App {
  return Fastify({
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
    // Behind a proxy, the client's address (rate limits, METRICS_ALLOW, logs) from X-Forwarded-For.
    trustProxy: config.trustProxy,
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
        // `oneOf` with a `discriminator` (DeviceCommand): the tag picks the one member to check.
        discriminator: true,
      },
    },
    schemaErrorFormatter: validationError,
    // Each response serializer compiled with the shared schemas it names only (a start in a third of the time).
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/** The schemas answers refer to by name (`$ref`), shared by routes and the document. */
function addSharedSchemas(app: App): void {
  for (const schema of [ErrorBody, Card, CardSummary, Family, NamedMember, LibraryRecord, Group, Wishlist, Device, DeviceStatus, ...Object.values(DEVICE_COMMAND_SCHEMAS), DeviceCommand, Link, LinkJob, ...LIVE_EVENT_COMPONENTS]) {
    app.addSchema(schema);
  }
}

/** The API's resources: each module's service, and its routes. */
async function registerResources(
  app: App,
  config: Readonly<Config>,
  store: Store,
  { tagger, families, principalStands, verifier }: { tagger: Tagger; families: FamilyService; principalStands: PrincipalStands; verifier: TokenVerifier },
): Promise<void> {
  // One secret for every worker, restart and instance sharing the key (src/auth/media-url-secret.ts).
  const mediaUrlSecret = await instanceSecret(config.mediaUrlSecret, config.auth, config.dataDir);
  const media = createMedia(store, config, mediaUrlSecret, app.log);
  app.addHook('preClose', () => media.close());
  await app.register(mediaRoutes, { ...media, families });
  await app.register(iconJsonRoutes, media);
  const cards = createCardService(store, families, tagger, createTrackMediaFiller());
  const signed = createSignedAnswers({ signer: media.signer, rights: createMediaReadRights(store, families), tagger });
  await app.register(cardRoutes, { cards, signed });
  // The same secret root as media URLs: whatever the deployment shares, every instance derives alike.
  const links = createLinks(store, config, { media, cards, instanceSecret: mediaUrlSecret, log: app.log.child({ component: 'links' }) });
  app.addHook('preClose', () => links.close());
  await app.register(linkRoutes, { links: links.service });
  await app.register(familyRoutes, { families });
  const devices = createDeviceService(store, {
    families,
    issueCredential: createPlayerCredentialIssuer(config.auth),
    assertReadable: async (userId, cardId) => {
      await cards.read(userId, cardId);
    },
    maxPlayersPerFamily: config.players.maxPerFamily,
  });
  await app.register(deviceRoutes, { devices });
  // Live events: streams end before the server closes (clients reconnect to another instance).
  const hub = createEventHub(store, config.events, {
    log: app.log,
    principalStands,
  });
  app.addHook('preClose', () => hub.close());
  await app.register(eventRoutes, { hub, families, principalStands, playerLeft: (principal) => devices.presence(principal, false) });
  // The players' MQTT interface, over WebSocket at /mqtt on the same port (issue 36).
  const mqtt = await createPlayersMqtt({ verifier, principalStands, devices, families, hub, config: config.mqtt, recheckMs: config.events.heartbeatMs, log: app.log.child({ component: 'mqtt' }) });
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!mqtt.handleUpgrade(request, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  app.addHook('preClose', () => mqtt.close());
  await app.register(transferRoutes, { transfer: createTransferService(store, media.mediaStore, families) });
  const groups = createGroupService(store, families, config, tagger);
  await app.register(libraryRoutes, { library: createLibraryService(store, families, groups, tagger) });
  await app.register(groupRoutes, { groups });
  await app.register(wishlistRoutes, { wishlists: createWishlistService(store, tagger), signed });
}
