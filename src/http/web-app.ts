import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../shared/errors.js';

/** Where the family web app is served (docs/api.md, "The web app"). */
export const WEB_APP_PATH = '/app/';

/**
 * The web app's built files: `npm ci` (scripts/prepare.js) builds web/ into dist/app. The same
 * path from src/http (tsx, tests) and from dist/http (the built server).
 */
export const WEB_APP_DIR = fileURLToPath(new URL('../../dist/app/', import.meta.url));

/**
 * The family web app (web/), a single-page app: its files under /app/, and every other /app/
 * path answers its index.html, so that a reload of /app/cards/abc opens that page. The hashed
 * assets are cached for good; index.html is always revalidated, so a new release is seen at once.
 * Text files go as the build's brotli or gzip copy (web/vite.config.ts) where the browser accepts
 * one. /favicon.ico, which browsers ask for at the root, is the app's. Its Content-Security-Policy
 * is set with the other security headers (http/security-headers.ts).
 */
export async function registerWebApp(app: FastifyInstance, root = WEB_APP_DIR): Promise<void> {
  if (!existsSync(`${root}/index.html`)) {
    // A checkout where the app was not built (`npm ci --ignore-scripts`): the API still works.
    app.log.warn({ root }, 'the web app is not built (npm run build:web); /app/ answers 404');
    app.get(`${WEB_APP_PATH}*`, { schema: { hide: true } }, async () => {
      throw new AppError('not-found', 'the web app is not built on this server: run `npm run build:web`');
    });
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: WEB_APP_PATH,
    // Routes for the files that are there; the wildcard below answers the app for the rest.
    wildcard: false,
    index: false,
    schemaHide: true,
    // The build's .br and .gz beside each text file, chosen by Accept-Encoding; other files as they are.
    preCompressed: true,
    // Set by setHeaders instead, per file.
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      // preCompressed answers by Accept-Encoding without saying so: a shared cache must know.
      res.setHeader('vary', 'accept-encoding');
    },
  });
  app.get('/favicon.ico', { schema: { hide: true } }, (_request, reply) => reply.sendFile('favicon.ico', root));
  const page = (_request: unknown, reply: FastifyReply) => reply.sendFile('index.html', root);
  // `/app` too (the router ignores trailing slashes); the page's asset paths are absolute.
  app.get(WEB_APP_PATH, { schema: { hide: true } }, page);
  app.get(`${WEB_APP_PATH}*`, { schema: { hide: true } }, async (request, reply) => {
    // A missing asset is a missing file (JSON 404), not the page: a stale page would run no script.
    if (request.url.startsWith(`${WEB_APP_PATH}assets/`)) throw new AppError('not-found', `no file ${request.url.split('?')[0]}`);
    return page(request, reply);
  });
}
