import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import helmet from 'helmet';
import { WEB_APP_PATH } from './web-app.js';

/** The origins the web app loads media and images from, beyond its own (the configured URL templates). */
export interface WebAppSources {
  /** MEDIA_URL_TEMPLATE: where signed media URLs (audio, covers, icons) point. */
  mediaUrlTemplate: string;
  /** GROUP_IMAGE_URL_TEMPLATE: where groups' images point. */
  groupImageUrlTemplate: string;
}

const originOf = (template: string): string[] => {
  const url = URL.parse(template.replace(/\{[^}]*\}/g, 'x'));
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? [url.origin] : [];
};

/**
 * The web app's policy (/app/): its scripts and styles from this origin only, nothing inline,
 * no eval; it talks to this origin only (the API, the sign-in endpoints, upload URLs). Images and
 * audio also come from where the configured templates point, and covers of catalogue cards may
 * be any https image (an image runs no code).
 */
export function webAppPolicy(sources: WebAppSources): Record<string, string[]> {
  const media = [...new Set([...originOf(sources.mediaUrlTemplate), ...originOf(sources.groupImageUrlTemplate)])];
  return {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:', 'blob:', 'https:', ...media],
    mediaSrc: ["'self'", 'blob:', ...media],
    connectSrc: ["'self'"],
    fontSrc: ["'self'"],
    // The app's service worker (/app/sw.js) and web app manifest, from this origin only. Named
    // though they would fall back to script-src and default-src, so neither widens with those.
    workerSrc: ["'self'"],
    manifestSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  };
}

/**
 * Security headers on every answer. Helmet's default policy suits the API's JSON and the /docs
 * page alike (Swagger UI loads its scripts and styles from this origin, and inline styles are
 * allowed), except `upgrade-insecure-requests`: behind plain HTTP (a local try-out, a proxy
 * terminating TLS elsewhere) it would send the page's own requests to an https:// that is not there.
 * The web app (/app/) gets a stricter policy: webAppPolicy.
 *
 * Helmet itself, not its Fastify plugin: the plugin builds the middleware again for every request,
 * parsing the policy each time (an eighth of a small read's CPU in a profile); built and run once
 * here (`recorded`), each request only sets the headers it made. They go among the reply's own
 * headers, not on the raw response: Node's `setHeader` checks and stores each one, and Fastify
 * then sets its own headers one by one too once the raw response has any (`writeHead`'s slow
 * path), where a reply with none on the raw response hands them all to `writeHead` at once.
 * Answers that leave Fastify for the raw response (live events, sign-in pages) take the reply's
 * headers with them (`reply.getHeaders()`).
 */
export function registerSecurityHeaders(app: FastifyInstance, opts: WebAppSources & { publicBaseUrl: string }): void {
  // Strict-Transport-Security tells a browser to reach this host over https only, for a year: only
  // where the public address is https (behind a proxy ending TLS too), or a browser that heeds it
  // could no longer reach an http:// one.
  const strictTransportSecurity = opts.publicBaseUrl.startsWith('https:');
  const api = recorded(helmet({ strictTransportSecurity, contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
  const webApp = recorded(helmet({ strictTransportSecurity, contentSecurityPolicy: { useDefaults: false, directives: webAppPolicy(opts) } }));
  const appRoot = WEB_APP_PATH.slice(0, -1);
  app.addHook('onRequest', (request, reply, done) => {
    const path = request.url;
    const inApp = path === appRoot || path.startsWith(WEB_APP_PATH) || path.startsWith(`${appRoot}?`);
    replay(inApp ? webApp : api, reply);
    done();
  });
}

/** What a helmet middleware does to a response: headers set (name, value) and removed (name). */
type HeaderChange = readonly [name: string, value: string] | readonly [name: string];

/**
 * The changes helmet makes, recorded once by running it against a recorder. Its policies here
 * have no per-request part (no nonce or other directive function), so it answers every request
 * alike; running its dozen middlewares for each request was 7% of a card read's CPU in a profile,
 * where setting the recorded headers is the part that remains.
 */
function recorded(middleware: ReturnType<typeof helmet>): HeaderChange[] {
  const changes: HeaderChange[] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => changes.push([name.toLowerCase(), String(value)]),
    removeHeader: (name: string) => changes.push([name.toLowerCase()]),
  };
  let failure: unknown;
  let finished = false;
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    failure = err;
    finished = true;
  });
  // Helmet's middlewares are synchronous; a policy that is not (or fails) is a mistake here.
  if (!finished || failure) throw new Error('security headers: helmet did not answer at once', { cause: failure });
  return changes;
}

function replay(changes: readonly HeaderChange[], reply: FastifyReply): void {
  for (const [name, value] of changes) {
    if (value === undefined) reply.removeHeader(name);
    else reply.header(name, value);
  }
}
