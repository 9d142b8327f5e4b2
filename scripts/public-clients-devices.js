#!/usr/bin/env node
/**
 * The public clients' own device tests against a fresh Cardshelf whose family has a browser
 * player open (issues 22 and 36): `seed --demo`, `serve`, two players registered in the demo
 * family through `POST /device-v2/devices/mine`: "Kitchen", opened in Chromium as the web app's
 * player page on its own credential (it reports its status and obeys commands from its event
 * stream, so it is online), and "Hall", never opened (offline); then
 *   - yoto-nodejs-client: `node --test` of lib/api-endpoints/devices.test.js, and of its
 *     device-model and account tests (lib/yoto-device.test.js, lib/yoto-account.test.js), whose
 *     MQTT reaches Cardshelf's broker under the public broker's name (below);
 *   - yoto-js: `test/e2e/read-only-validations.ts`;
 *   - yoto_api (with --yoto-api): its device login approved at /activate in Chromium, then its
 *     MQTT end-to-end tests (`pytest tests/e2e/test_mqtt.py -m e2e`).
 *
 *   node scripts/public-clients-devices.js --nodejs-client DIR --yoto-js DIR [--yoto-api DIR --python PY]
 *     [--work DIR] [--model-timeout 120]
 *
 * DIR is a git directory (a mirror: `git archive HEAD` is extracted) or a checkout; nothing of
 * theirs enters this repository. Only where the clients connect changes: neither JavaScript
 * client takes a base URL in these tests, so their requests to api.yotoplay.com are sent here by
 * the undici dispatcher of scripts/public-clients/redirect-yoto-hosts.js (preloaded; yoto-js's
 * fetch honours it too), and the public broker's host name is answered by a TLS front on a
 * loopback address of its own, port 443 (scripts/public-clients/broker-tls.js, a throwaway
 * certificate trusted through NODE_EXTRA_CA_CERTS and SSL_CERT_FILE), to which the preload's DNS
 * answer, or yoto_api's `YotoMqttClient.URL` (scripts/public-clients/yoto_api_redirect.py),
 * points. Port 443 needs root (or CAP_NET_BIND_SERVICE). The JavaScript clients use the demo
 * user's token (`seed --demo` prints it). A line per suite with its figures; exit 0 when all pass.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { approveDevice } from './public-clients/activate.js';
import { startBrokerTls } from './public-clients/broker-tls.js';
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
    'model-timeout': { type: 'string', default: '120' },
  },
});
if (!args['nodejs-client'] || !args['yoto-js']) {
  process.stderr.write('usage: node scripts/public-clients-devices.js --nodejs-client DIR --yoto-js DIR [--yoto-api DIR --python PY] [--work DIR] [--model-timeout SECONDS]\n');
  process.exit(2);
}
const say = (line) => process.stdout.write(`${line}\n`);


/** Runs a command to its end (or `timeoutMs`, then SIGTERM); its output is kept. */
function run(command, argv, options, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(command, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = timeoutMs ? setTimeout(() => child.kill('SIGTERM'), timeoutMs) : undefined;
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

// --- Cardshelf: a fresh data directory, the demo seeded, the server on a free loopback port ---
const work = args.work ?? (await mkdtemp(path.join(tmpdir(), 'cardshelf-public-devices-')));
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
const base = `http://127.0.0.1:${port}`;
const serverEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL: 'warn' };
const seeded = await run(process.execPath, [...cli, 'seed', '--demo'], { cwd: ROOT, env: serverEnv });
const token = seeded.stdout.trim().split('\n').pop();
const [, email, password] = /sign in as (\S+) with the password (\S+)/.exec(seeded.stderr) ?? [];
if (seeded.code !== 0 || !token || !email) throw new Error(`seed --demo failed: ${seeded.stderr}`);
const server = spawn(process.execPath, [...cli, 'serve'], { cwd: ROOT, env: serverEnv, stdio: ['ignore', 'ignore', 'inherit'] });
process.on('exit', () => server.kill('SIGTERM'));
for (let i = 0; ; i++) {
  if ((await fetch(`${base}/readyz`).catch(() => undefined))?.ok) break;
  if (i > 450) throw new Error('the server did not start within 90 s');
  await sleep(200);
}

async function api(method, url, bearer, body) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

// --- Two players in the demo family: Kitchen, a browser player open in Chromium; Hall, never opened ---
const kitchen = await api('POST', '/device-v2/devices/mine', token, { name: 'Kitchen' });
await api('POST', '/device-v2/devices/mine', token, { name: 'Hall' });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required'] });
process.on('exit', () => void browser.close());
const playerPage = await (await browser.newContext()).newPage();
// The web app's player page on the player's credential, as a tablet made a player keeps it
// (web/src/player-credential.ts): the page reports and follows its event stream by itself.
await playerPage.goto(`${base}/app/`);
await playerPage.evaluate(
  // Runs in the page: its own storage.
  ([key, value]) => globalThis.localStorage.setItem(key, value),
  ['cardshelf:player', JSON.stringify({ deviceId: kitchen.device.deviceId, name: 'Kitchen', accessToken: kitchen.credential.accessToken })],
);
await playerPage.goto(`${base}/app/be-player`);
await playerPage.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30_000 });
for (let i = 0; !(await api('GET', `/device-v2/${kitchen.device.deviceId}/status`, token)).isOnline; i++) {
  if (i > 100) throw new Error('the browser player did not report within 20 s');
  await sleep(200);
}
say(`cardshelf serving at ${base}; demo family players: Kitchen ${kitchen.device.deviceId} (a browser player, open: online), Hall (never opened: offline)`);

// --- The public broker's name, served here: a TLS front on a loopback address of its own ---
const broker = await startBrokerTls({
  dir: work,
  address: `127.36.${1 + Math.floor(Math.random() * 254)}.${1 + Math.floor(Math.random() * 254)}`,
  target: { host: '127.0.0.1', port },
});
process.on('exit', () => void broker.close());
say(`the public broker's name answered at ${broker.address}:${broker.port}, passed to ${base}/mqtt`);

let failures = 0;

// --- yoto-nodejs-client ---
const nodeDir = prepareClient(args['nodejs-client'], path.join(work, 'yoto-nodejs-client'), [['install', '--omit=dev']]);
await writeFile(
  path.join(nodeDir, '.env'),
  `YOTO_ACCESS_TOKEN=${token}\nYOTO_REFRESH_TOKEN=unused-the-access-token-outlives-the-tests\nYOTO_CLIENT_ID=yoto-nodejs-client-at-cardshelf\n`,
);
const nodeEnv = {
  ...process.env,
  CARDSHELF_URL: base,
  CLIENT_DIR: nodeDir,
  NODE_OPTIONS: `--import ${pathToFileURL(PRELOAD)}`,
  BROKER_ADDRESS: broker.address,
  NODE_EXTRA_CA_CERTS: broker.caFile,
};
const figures = (out) => {
  const pick = (name) => new RegExp(`^# ${name} (\\d+)`, 'm').exec(out)?.[1] ?? '?';
  return `tests ${pick('tests')}, pass ${pick('pass')}, fail ${pick('fail')}`;
};
const failedNames = (out) => [...out.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((m) => m[1]);

const devices = await run(process.execPath, ['--test', 'lib/api-endpoints/devices.test.js'], { cwd: nodeDir, env: nodeEnv });
say(`${devices.code === 0 ? 'PASS' : 'FAIL'} yoto-nodejs-client lib/api-endpoints/devices.test.js: ${figures(devices.stdout)}`);
for (const name of failedNames(devices.stdout)) say(`  not ok: ${name}`);
if (devices.code !== 0) failures++;

for (const file of ['lib/yoto-device.test.js', 'lib/yoto-account.test.js']) {
  const model = await run(process.execPath, ['--test', file], { cwd: nodeDir, env: nodeEnv }, Number(args['model-timeout']) * 1000);
  const stopped = model.signal ? ` (stopped after ${args['model-timeout']} s)` : '';
  const ok = model.code === 0 && !model.signal;
  say(`${ok ? 'PASS' : 'FAIL'} yoto-nodejs-client ${file} (its MQTT at Cardshelf's broker): ${figures(model.stdout)}, skipped ${/^# skipped (\d+)/m.exec(model.stdout)?.[1] ?? '?'}${stopped}`);
  for (const name of failedNames(model.stdout).slice(0, 8)) say(`  not ok: ${name}`);
  if (!ok) {
    failures++;
    say((model.stdout + model.stderr).trim().split('\n').slice(-40).join('\n').replace(/^/gm, '  | '));
  }
}

// --- yoto-js: its read-only validations (devices, icons, media) ---
const jsDir = prepareClient(args['yoto-js'], path.join(work, 'yoto-js'), []);
const validations = await run(
  process.execPath,
  // yoto-js ships TypeScript sources; tsx (a dependency of Cardshelf) runs them.
  ['--import', import.meta.resolve('tsx'), 'test/e2e/read-only-validations.ts'],
  // Its fetch is sent here by the dispatcher, made with the nodejs client's undici.
  { cwd: jsDir, env: { ...nodeEnv, YOTO_ACCESS_TOKEN: token } },
);
const passed = /Passed: (\d+)/.exec(validations.stdout)?.[1];
const total = /Total Tests: (\d+)/.exec(validations.stdout)?.[1];
const failedJs = /Failed: (\d+)/.exec(validations.stdout)?.[1];
say(`${failedJs === '0' ? 'PASS' : 'FAIL'} yoto-js test/e2e/read-only-validations.ts: ${passed ?? '?'} of ${total ?? '?'} passed`);
const failedPart = validations.stdout.split('--- Failed Tests ---')[1];
if (failedPart) say(failedPart.trim().replace(/^/gm, '  | ').slice(0, 3000));
if (failedJs !== '0') failures++;

// --- yoto_api (Python): its device login, then its MQTT end-to-end tests ---
if (args['yoto-api']) {
  const dir = prepareClient(args['yoto-api'], path.join(work, 'yoto_api'), [], 'setup.py');
  const env = {
    ...process.env,
    CARDSHELF_URL: base,
    PYTHONPATH: [path.join(ROOT, 'scripts/public-clients'), dir].join(path.delimiter),
    BROKER_ADDRESS: broker.address,
    BROKER_PORT: String(broker.port),
    SSL_CERT_FILE: broker.caFile,
  };
  const clientId = 'yoto-api-at-cardshelf';
  const tokens = await loginYotoApi({ python: args.python, dir, env, clientId, approve: (uri, code) => approveDevice(browser, { email, password }, uri, code) });
  await writeFile(path.join(dir, '.env'), `YOTO_CLIENT_ID=${clientId}\nYOTO_REFRESH_TOKEN=${tokens.refresh_token}\n`);
  const tested = await run(args.python, ['-m', 'pytest', 'tests/e2e/test_mqtt.py', '-m', 'e2e', '-p', 'yoto_api_redirect', '-p', 'no:cacheprovider', '-q', '-rfEs'], { cwd: dir, env });
  const summary = tested.stdout.trim().split('\n').at(-1);
  say(`${tested.code === 0 ? 'PASS' : 'FAIL'} yoto_api tests/e2e/test_mqtt.py -m e2e (its MQTT at Cardshelf's broker): ${summary}`);
  if (tested.code !== 0) {
    failures++;
    say((tested.stdout + tested.stderr).trim().split('\n').slice(-60).join('\n').replace(/^/gm, '  | '));
  }
}

const stillOnline = (await api('GET', `/device-v2/${kitchen.device.deviceId}/status`, token)).isOnline;
say(`the browser player Kitchen ${stillOnline ? 'still online' : 'OFFLINE'} at the end`);
await browser.close();
await broker.close();
process.exit(failures ? 1 : 0);
