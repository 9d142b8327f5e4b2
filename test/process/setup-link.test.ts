import { afterEach, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { createSetupLinkService, SETUP_LINK_TTL_MS } from '../../src/accounts/setup-link.js';
import { openStore } from '../../src/db/store.js';
import { startTestApp } from '../support/test-app.js';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { Browser, field, formAction } from '../support/oauth-browser.js';
import { startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

const LINK_LINE = /no accounts yet; open this link once, within 24 hours, to make the first owner: \S+(\/setup\/[A-Za-z0-9_-]{43})\n/;

/** A form post as a browser sends it from the page itself. */
async function post(url: string, form: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, body: new URLSearchParams(form), redirect: 'manual' });
  return { status: res.status, text: await res.text() };
}
const csrfIn = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

describe(`the first owner's set-up link on ${testDialect()}`, { timeout: 180_000 }, () => {
  let deployment: Deployment | undefined;
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    await deployment?.close();
    deployment = undefined;
  });

  it('serve prints a link on an empty instance; it makes one owner; it works once; a restart prints none', async () => {
    deployment = await createDeployment();
    server = await startServer(deployment.env);
    await expect.poll(() => LINK_LINE.exec(server!.stderr())?.[1], { timeout: 10_000 }).toBeDefined();
    const link = `${server.url}${LINK_LINE.exec(server.stderr())![1]}`;

    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Set up Cardshelf');
    const form = { csrf: csrfIn(html), name: 'Olive', email: 'olive@example.com' };

    // Without its token: refused. A refused form (short password) leaves the link usable.
    expect((await post(link, { ...form, csrf: '', password: 'long enough password' })).status).toBe(403);
    const short = await post(link, { ...form, password: 'short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('Set up Cardshelf');

    const made = await post(link, { ...form, password: 'long enough password' });
    expect(made.status, made.text).toBe(201);
    const accounts = createAccountService(deployment.store());
    expect(await accounts.authenticate('olive@example.com', 'long enough password')).toMatchObject({ displayName: 'Olive', owner: true });

    const again = await post(link, { ...form, email: 'mallory@example.com', password: 'long enough password' });
    expect(again.status).toBe(400);
    expect(again.text).toContain('Set-up link not usable');
    expect((await fetch(link)).status).toBe(400);
    expect((await accounts.list()).map((a) => a.email)).toEqual(['olive@example.com']);

    await server.stop();
    server = await startServer(deployment.env);
    // The line would come right after listening; the log of the first request comes later still.
    expect((await fetch(`${server.url}/healthz`)).status).toBeLessThan(500);
    expect(server.stderr()).not.toContain('no accounts yet');
  });

  it('links are stored hashed, die after 24 hours, and all die once any account exists', async () => {
    deployment = await createDeployment();
    const store = deployment.store();
    const { migrateToLatest } = await import('../../src/db/migrate.js');
    await migrateToLatest(store);
    let now = Date.now();
    const accounts = createAccountService(store);
    const families = { ensureFamilyId: async (userId: string) => `family-of-${userId}` };
    const links = createSetupLinkService(store, accounts, families, () => now);

    const first = (await links.issueIfEmpty())!;
    const second = (await links.issueIfEmpty())!;
    expect(first).not.toBe(second);
    const stored = await store.db.selectFrom('setup_links').select('secret_hash').execute();
    expect(stored.map((r) => r.secret_hash)).not.toContain(first);
    expect(await links.usable(first)).toBe(true);

    now += SETUP_LINK_TTL_MS + 1;
    expect(await links.usable(first)).toBe(false);
    await expect(links.accept(first, { email: 'a@example.com', displayName: 'A', password: 'long enough password' })).rejects.toThrow(/set-up link/);
    now -= SETUP_LINK_TTL_MS;

    await accounts.add({ email: 'op@example.com', displayName: 'Operator', password: 'long enough password', owner: true });
    expect(await links.usable(second)).toBe(false);
    await expect(links.accept(second, { email: 'b@example.com', displayName: 'B', password: 'long enough password' })).rejects.toThrow(/set-up link/);
    expect(await links.issueIfEmpty()).toBeUndefined();
  });
});

describe(`the set-up form's password rules on ${testDialect()}`, { timeout: 120_000 }, () => {
  it.each(['aaaaaaaaaa', '1234567890', 'iloveyou12'])('a common or easy password (%s) is refused with a clear message; the link stays usable', async (password) => {
    const t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost' });
    const store = openStore(t.config.database);
    try {
      const accounts = createAccountService(store);
      // The link `serve` would print when it starts listening (app.inject does not listen).
      const secret = (await createSetupLinkService(store, accounts, { ensureFamilyId: async (userId: string) => `family-of-${userId}` }).issueIfEmpty())!;
      const browser = new Browser(t);
      const page = await browser.request('GET', `/setup/${secret}`);
      expect(page.status).toBe(200);
      const weak = await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), name: 'Olive', email: 'olive@example.com', password });
      expect(weak.status).toBe(400);
      expect(weak.text).toContain('This password is too common or too easy to guess');
      expect(await accounts.list()).toEqual([]);
      expect((await browser.request('GET', `/setup/${secret}`)).status).toBe(200);
    } finally {
      await store.db.destroy();
      await t.close();
    }
  });
});
