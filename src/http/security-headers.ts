import type { FastifyInstance } from 'fastify';
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
 * parsing the policy each time (an eighth of a small read's CPU in a profile); built once here,
 * each request only sets the headers it made.
 */
export function registerSecurityHeaders(app: FastifyInstance, sources: WebAppSources): void {
  const apply = helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } });
  const applyWebApp = helmet({ contentSecurityPolicy: { useDefaults: false, directives: webAppPolicy(sources) } });
  const appRoot = WEB_APP_PATH.slice(0, -1);
  app.addHook('onRequest', (request, reply, done) => {
    const path = request.url;
    const inApp = path === appRoot || path.startsWith(WEB_APP_PATH) || path.startsWith(`${appRoot}?`);
    (inApp ? applyWebApp : apply)(request.raw, reply.raw, () => done());
  });
}
