#!/usr/bin/env node
/**
 * The public clients' own sign-in code against a fresh Cardshelf (issue 19), as a newcomer
 * would: `seed --demo`, `serve`, then each client's device login approved at /activate in
 * Chromium with the demo account, the demo user's MYO cards listed by the client, its token
 * refreshed by the client, and a call again with the new token.
 *
 *   node scripts/public-clients-sign-in.js --nodejs-client DIR --yoto-js DIR [--yoto-api DIR --python PY]
 *     [--work DIR] [--access-ttl 60] [--localhost]
 *
 * DIR is a git directory (a mirror: `git archive HEAD` is extracted) or a checkout. Each
 * client is put in --work (default: a new temporary directory) and its dependencies installed
 * there from the npm registry; nothing of theirs enters this repository. Only their base URLs
 * change: yoto-js takes `authBaseUrl` and `baseUrl` options; yoto-nodejs-client has none, so its
 * requests to login.yotoplay.com and api.yotoplay.com are sent here by an undici dispatcher
 * preloaded into its commands (scripts/public-clients/redirect-yoto-hosts.js).
 * The Python client yoto_api (--yoto-api) keeps its URLs as module constants, which
 * scripts/public-clients/yoto_api_redirect.py replaces; its device login is driven by
 * scripts/public-clients/yoto_api_login.py, and then its own end-to-end tests (`pytest tests/e2e
 * -m e2e`) run with the refresh token it got, as its README says to run them against the public
 * service. Its dependencies must be installed in --python (a virtual environment) beforehand.
 * Needs Chromium (CHROMIUM_PATH, default /usr/bin/chromium), and dist/ (`npm run build`) or
 * tsx. Exit code 0 when every flow passed; a line per step on stdout.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { approveDevice as approveDeviceAt, signIn } from './public-clients/activate.js';
import { prepareClient } from './public-clients/prepare-client.js';
import { loginYotoApi } from './public-clients/yoto-api.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PRELOAD = path.join(ROOT, 'scripts/public-clients/redirect-yoto-hosts.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const { values: args } = parseArgs({
  options: {
    'nodejs-client': { type: 'string' },
    'yoto-js': { type: 'string' },
    'yoto-api': { type: 'string' },
    // A Python with yoto_api's dependencies and pytest, pytest-asyncio, python-dotenv installed.
    python: { type: 'string', default: 'python3' },
    work: { type: 'string' },
    'access-ttl': { type: 'string', default: '60' },
    // As the README's `npm start`: PUBLIC_BASE_URL left to its default, http://localhost:PORT.
    localhost: { type: 'boolean', default: false },
  },
});
if (!args['nodejs-client'] && !args['yoto-js'] && !args['yoto-api']) {
  process.stderr.write('usage: node scripts/public-clients-sign-in.js [--nodejs-client DIR] [--yoto-js DIR] [--yoto-api DIR --python PY] [--work DIR] [--access-ttl SECONDS] [--localhost]\n');
  process.exit(2);
}

const results = [];
const say = (line) => process.stdout.write(`${line}\n`);
function record(flow, ok, detail) {
  results.push({ flow, ok });
  say(`${ok ? 'PASS' : 'FAIL'} ${flow}${detail ? `: ${detail}` : ''}`);
}
const claims = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());


/** Runs a command to its end; its output is kept. */
function run(command, argv, options) {
  return new Promise((resolve) => {
    const child = spawn(command, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      options.onStdout?.(stdout);
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

// --- Cardshelf: a fresh data directory, the demo seeded, the server on a free loopback port ---
const work = args.work ?? (await mkdtemp(path.join(tmpdir(), 'cardshelf-public-clients-')));
await mkdir(work, { recursive: true });
const dataDir = path.join(work, 'data');
await rm(dataDir, { recursive: true, force: true });
const cli = existsSync(path.join(ROOT, 'dist/cli.js')) ? [path.join(ROOT, 'bin/cardshelf.js')] : ['--import', 'tsx', path.join(ROOT, 'src/main.ts')];
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});
const base = args.localhost ? `http://localhost:${port}` : `http://127.0.0.1:${port}`;
const serverEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), ...(args.localhost ? {} : { PUBLIC_BASE_URL: base }), ACCESS_TOKEN_TTL_SECONDS: args['access-ttl'], LOG_LEVEL: 'warn' };
const seeded = await run(process.execPath, [...cli, 'seed', '--demo'], { cwd: ROOT, env: serverEnv });
const [, email, password] = /sign in as (\S+) with the password (\S+)/.exec(seeded.stderr) ?? [];
if (seeded.code !== 0 || !email) throw new Error(`seed --demo failed: ${seeded.stderr}`);
say(`seeded ${process.env.DATABASE_URL ? 'the PostgreSQL database of DATABASE_URL' : `SQLite in ${dataDir}`}; demo account ${email}`);
const server = spawn(process.execPath, [...cli, 'serve'], { cwd: ROOT, env: serverEnv, stdio: ['ignore', 'ignore', 'inherit'] });
// Whatever happens below, the server ends with this script.
process.on('exit', () => server.kill('SIGTERM'));
for (let i = 0; ; i++) {
  if ((await fetch(`${base}/readyz`).catch(() => undefined))?.ok) break;
  if (i > 100) throw new Error('the server did not start');
  await sleep(200);
}
say(`cardshelf serving at ${base} (access tokens valid ${args['access-ttl']} s)`);

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });

const account = { email, password };
const approveDevice = (verificationUri, userCode) => approveDeviceAt(browser, account, verificationUri, userCode);

/** An app's loopback redirect (RFC 8252): a server on a free port of 127.0.0.1 that takes the answer. */
async function loopbackCallback() {
  let resolve;
  const received = new Promise((r) => (resolve = r));
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    res.end('signed in; back to the app');
    if (url.pathname === '/callback') resolve(url.searchParams);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { port: server.address().port, received, close: () => server.close() };
}

/** A person following an app's /authorize link: signs in as the demo parent and approves. */
async function signInInBrowser(url, received) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  await signIn(page, account);
  const answer = await received;
  await context.close();
  return answer;
}

async function step(flow, body) {
  try {
    const detail = await body();
    record(flow, true, detail);
  } catch (err) {
    record(flow, false, err instanceof Error ? err.stack : String(err));
  }
}

// --- yoto-nodejs-client: its own commands (yoto-auth, yoto-content, yoto-refresh-token) and its auth tests ---
if (args['nodejs-client']) {
  const dir = prepareClient(args['nodejs-client'], path.join(work, 'yoto-nodejs-client'), [['install', '--omit=dev'], ['install', '--no-save', 'argsclopts']]);
  const env = { ...process.env, CARDSHELF_URL: base, CLIENT_DIR: dir, NODE_OPTIONS: `--import ${pathToFileURL(PRELOAD)}` };
  const envFile = path.join(dir, '.env');
  await rm(envFile, { force: true });
  const node = (argv) => run(process.execPath, argv, { cwd: dir, env });

  await step('yoto-nodejs-client device login (bin/auth.js), approved at /activate', async () => {
    let approving;
    const auth = run(process.execPath, ['bin/auth.js', '--output', envFile], {
      cwd: dir,
      env,
      onStdout: (out) => {
        const url = /URL:\s+(\S+)/.exec(out)?.[1];
        const code = /Code:\s+(\S+)/.exec(out)?.[1];
        if (url && code && !approving) approving = approveDevice(url, code);
      },
    });
    const done = await auth;
    await approving;
    say(done.stdout.trim().replace(/^/gm, '  | '));
    if (done.code !== 0) throw new Error(`yoto-auth exited ${done.code}: ${done.stderr}`);
    const saved = await readFile(envFile, 'utf8');
    const token = /YOTO_ACCESS_TOKEN=(\S+)/.exec(saved)?.[1];
    const c = claims(token);
    return `token sub ${c.sub}, scope "${c.scope}", aud ${JSON.stringify(c.aud)}, valid ${c.exp - c.iat} s`;
  });

  const listCards = async () => {
    const listed = await node(['bin/content.js', '--env-file', envFile]);
    if (listed.code !== 0) throw new Error(`yoto-content exited ${listed.code}: ${listed.stdout}${listed.stderr}`);
    // eslint-disable-next-line no-control-regex -- its output is coloured (console.dir)
    const plain = listed.stdout.replace(/\x1b\[[0-9;]*m/g, '');
    const titles = [...plain.matchAll(/title: '([^']*)'/g)].map((m) => m[1]);
    if (!titles.length) throw new Error(`no cards listed: ${listed.stdout}`);
    return `${titles.length} cards (${titles.slice(0, 3).join(', ')}, ...)`;
  };
  await step('yoto-nodejs-client lists the demo user\'s MYO cards (bin/content.js, GET /content/mine)', listCards);
  await step('yoto-nodejs-client refreshes its token (bin/refresh-token.js --force)', async () => {
    const before = await readFile(envFile, 'utf8');
    const refreshed = await node(['bin/refresh-token.js', '--force', '--output', envFile]);
    if (refreshed.code !== 0) throw new Error(`yoto-refresh-token exited ${refreshed.code}: ${refreshed.stdout}${refreshed.stderr}`);
    const after = await readFile(envFile, 'utf8');
    const pick = (text, name) => new RegExp(`${name}=(\\S+)`).exec(text)?.[1];
    if (pick(before, 'YOTO_REFRESH_TOKEN') === pick(after, 'YOTO_REFRESH_TOKEN')) throw new Error('the refresh token did not rotate');
    if (pick(before, 'YOTO_ACCESS_TOKEN') === pick(after, 'YOTO_ACCESS_TOKEN')) throw new Error('the access token did not change');
    return 'new access and refresh tokens saved';
  });
  await step('yoto-nodejs-client lists the cards again with the refreshed token', listCards);
  await step('yoto-nodejs-client lists the cards past its token\'s refresh point: it refreshes by itself (RefreshableToken)', async () => {
    const before = /YOTO_ACCESS_TOKEN=(\S+)/.exec(await readFile(envFile, 'utf8'))?.[1];
    // It refreshes 30 s before `exp`.
    const wait = (claims(before).exp - 30) * 1000 - Date.now() + 1000;
    if (wait > 0) await sleep(wait);
    const listed = await listCards();
    const after = /YOTO_ACCESS_TOKEN=(\S+)/.exec(await readFile(envFile, 'utf8'))?.[1];
    if (after === before) throw new Error('the client did not refresh its token');
    return `${listed}; a new token saved`;
  });
  await step('yoto-nodejs-client\'s auth tests (node --test lib/api-endpoints/auth.test.js)', async () => {
    const tested = await node(['--test', 'lib/api-endpoints/auth.test.js']);
    const summary = /# pass (\d+)[\s\S]*# fail (\d+)/.exec(tested.stdout);
    if (tested.code !== 0) throw new Error(`exit ${tested.code}\n${tested.stdout}${tested.stderr}`);
    return `pass ${summary?.[1]}, fail ${summary?.[2]}`;
  });

  await step('yoto-nodejs-client authorization code with PKCE (getAuthorizeUrl, exchangeToken), loopback redirect; getUserMyoContent', async () => {
    // In this process: its library functions, its requests redirected as in its commands.
    process.env.CARDSHELF_URL = base;
    process.env.CLIENT_DIR = dir;
    await import(pathToFileURL(PRELOAD).href);
    const { getAuthorizeUrl, exchangeToken } = await import(pathToFileURL(path.join(dir, 'lib/api-endpoints/auth.js')).href);
    const { YotoClient } = await import(pathToFileURL(path.join(dir, 'index.js')).href);
    const verifier = randomBytes(48).toString('base64url');
    const callback = await loopbackCallback();
    try {
      const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
      const clientId = 'yoto-nodejs-client-at-cardshelf';
      const authorizeUrl = getAuthorizeUrl({
        clientId,
        redirectUri,
        responseType: 'code',
        state: randomBytes(8).toString('hex'),
        codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
        codeChallengeMethod: 'S256',
      });
      // The browser is sent where the client's requests go (as a hosts-file entry would).
      const answer = await signInInBrowser(authorizeUrl.replace('https://login.yotoplay.com', base), callback.received);
      const tokens = await exchangeToken({ grantType: 'authorization_code', code: answer.get('code'), redirectUri, codeVerifier: verifier, clientId });
      const client = new YotoClient({ clientId, accessToken: tokens.access_token, refreshToken: tokens.refresh_token, onTokenRefresh: () => {} });
      const mine = await client.getUserMyoContent();
      if (!mine.cards.length) throw new Error('no cards listed');
      return `${mine.cards.length} cards; state given back ${answer.has('state')}`;
    } finally {
      callback.close();
    }
  });
}

// --- yoto-js: its YotoDeviceAuth and YotoBrowserAuth, and Yoto with the refreshing provider ---
if (args['yoto-js']) {
  const dir = prepareClient(args['yoto-js'], path.join(work, 'yoto-js'), []);
  // yoto-js ships TypeScript sources (`.ts` imports); tsx (a dependency of Cardshelf) runs them.
  const { register } = await import('tsx/esm/api');
  register();
  const yoto = await import(pathToFileURL(path.join(dir, 'src/index.ts')).href);
  const clientId = 'yoto-js-at-cardshelf';
  const config = { authBaseUrl: base, timeout: 30_000 };

  /** Lists the cards through the client, then waits past the token's refresh point and lists again. */
  async function useAndRefresh(auth, tokens) {
    const provider = auth.createProvider(tokens);
    const api = new yoto.Yoto({ auth: provider, baseUrl: base });
    const cards = await api.content.listMYO();
    if (!cards.length) throw new Error('no cards listed');
    const first = await provider.getAccessToken();
    // The client refreshes 30 s before `exp`; wait until then, and it refreshes by itself.
    const wait = (claims(first).exp - 30) * 1000 - Date.now() + 1000;
    if (wait > 0) await sleep(wait);
    const again = await api.content.listMYO();
    const second = await provider.getAccessToken();
    if (second === first) throw new Error('the provider did not refresh its token');
    return `${cards.length} cards (${cards.slice(0, 3).map((c) => c.title).join(', ')}, ...); after the refresh ${again.length} cards, token sub ${claims(second).sub}`;
  }

  await step('yoto-js device login (YotoDeviceAuth), approved at /activate; listMYO; refresh', async () => {
    const auth = new yoto.YotoDeviceAuth(clientId, config);
    const device = await auth.initiateDeviceLogin();
    const [tokens] = await Promise.all([auth.pollForToken(device.device_code, device.interval), approveDevice(device.verification_uri, device.user_code)]);
    return useAndRefresh(auth, tokens);
  });

  await step('yoto-js browser PKCE (YotoBrowserAuth), loopback redirect; listMYO; refresh', async () => {
    const callback = await loopbackCallback();
    try {
      const auth = new yoto.YotoBrowserAuth(clientId, `http://127.0.0.1:${callback.port}/callback`, config);
      const { url, codeVerifier } = await auth.generateAuthUrl();
      const answer = await signInInBrowser(url, callback.received);
      if (!answer.get('code')) throw new Error(`no code: ${answer}`);
      const tokens = await auth.exchangeCodeForTokens(answer.get('code'), codeVerifier);
      return useAndRefresh(auth, tokens);
    } finally {
      callback.close();
    }
  });
}

// --- yoto_api (Python): its own device login, then its own end-to-end tests ---
if (args['yoto-api']) {
  const dir = prepareClient(args['yoto-api'], path.join(work, 'yoto_api'), [], 'setup.py');
  const helpers = path.join(ROOT, 'scripts/public-clients');
  const env = { ...process.env, CARDSHELF_URL: base, PYTHONPATH: [helpers, dir].join(path.delimiter) };
  const clientId = 'yoto-api-at-cardshelf';
  let refreshToken;
  await step('yoto_api device login (YotoClient.device_code_flow_start/complete), approved at /activate', async () => {
    const tokens = await loginYotoApi({ python: args.python, dir, env, clientId, approve: approveDevice });
    refreshToken = tokens.refresh_token;
    const c = claims(tokens.access_token);
    return `token sub ${c.sub}, scope "${c.scope}", valid ${c.exp - c.iat} s`;
  });
  await step("yoto_api's own end-to-end tests (pytest tests/e2e -m e2e), with the refresh token of its login", async () => {
    if (!refreshToken) throw new Error('no refresh token: the login failed');
    await writeFile(path.join(dir, '.env'), `YOTO_CLIENT_ID=${clientId}\nYOTO_REFRESH_TOKEN=${refreshToken}\n`);
    const tested = await run(args.python, ['-m', 'pytest', 'tests/e2e', '-m', 'e2e', '-p', 'yoto_api_redirect', '-p', 'no:cacheprovider', '-q', '-rfEs'], { cwd: dir, env });
    say(tested.stdout.trim().replace(/^/gm, '  | '));
    const summary = tested.stdout.trim().split('\n').at(-1);
    if (tested.code !== 0) throw new Error(`exit ${tested.code}: ${summary}`);
    return summary;
  });
}

await browser.close();
const failed = results.filter((r) => !r.ok);
say(`${results.length - failed.length} of ${results.length} flows passed`);
process.exit(failed.length ? 1 : 0);
