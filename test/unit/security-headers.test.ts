import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import Fastify from 'fastify';
import helmet from 'helmet';
import { describe, expect, it } from 'vitest';
import { registerSecurityHeaders, webAppPolicy } from '../../src/http/security-headers.js';

const sources = { mediaUrlTemplate: 'https://media.example.com/{sha256}', groupImageUrlTemplate: '/images/{imageId}.png', publicBaseUrl: 'https://shelf.example' };

/** The headers helmet itself sets on a real response, with the options the server uses. */
function helmetHeaders(options: Parameters<typeof helmet>[0]): Record<string, unknown> {
  const request = new IncomingMessage(new Socket());
  const response = new ServerResponse(request);
  response.setHeader('X-Powered-By', 'something');
  helmet(options)(request, response, () => {});
  return response.getHeaders();
}

/**
 * The security headers are recorded from helmet once and set on each answer
 * (src/http/security-headers.ts): every answer must carry exactly what helmet would have set.
 */
describe('security headers', () => {
  it('are those helmet sets, for the API and for the web app', async () => {
    const app = Fastify();
    registerSecurityHeaders(app, sources);
    app.get('/content/mine', async () => ({ cards: [] }));
    app.get('/app/*', async () => 'page');
    await app.ready();

    const cases: [string, Parameters<typeof helmet>[0]][] = [
      ['/content/mine', { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }],
      ['/app/cards', { contentSecurityPolicy: { useDefaults: false, directives: webAppPolicy(sources) } }],
    ];
    for (const [url, options] of cases) {
      const expected = helmetHeaders(options);
      expect(Object.keys(expected).length, url).toBeGreaterThan(8);
      expect(expected, url).not.toHaveProperty('x-powered-by');
      const answer = await app.inject({ method: 'GET', url });
      for (const [name, value] of Object.entries(expected)) expect(answer.headers[name], `${url}: ${name}`).toBe(value);
    }
    // The two policies differ: the app's is the strict one.
    const api = await app.inject({ method: 'GET', url: '/content/mine' });
    const page = await app.inject({ method: 'GET', url: '/app/cards' });
    expect(page.headers['content-security-policy']).not.toBe(api.headers['content-security-policy']);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    await app.close();
  });
});
