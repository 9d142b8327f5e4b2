#!/usr/bin/env node
/**
 * The public clients' own device tests against a fresh Cardshelf with registered players
 * (issue 22): `seed --demo`, `serve`, two players registered in the demo family through
 * `POST /device-v2/devices/mine` ("Kitchen", which reports its status every 5 seconds and so is
 * online, and "Hall", which never reports and so is offline), then
 *   - yoto-nodejs-client: `node --test lib/api-endpoints/devices.test.js`, and its device-model
 *     and account tests (lib/yoto-device.test.js, lib/yoto-account.test.js; these connect to the
 *     public service's MQTT broker, which Cardshelf does not serve: they are run to show where
 *     they stop, within --model-timeout seconds);
 *   - yoto-js: `test/e2e/read-only-validations.ts`.
 *
 *   node scripts/public-clients-devices.js --nodejs-client DIR --yoto-js DIR [--work DIR] [--model-timeout 60]
 *
 * DIR is a git directory (a mirror: `git archive HEAD` is extracted) or a checkout; nothing of
 * theirs enters this repository. Neither client takes a base URL in these tests, so their
 * requests to api.yotoplay.com are sent here by the undici dispatcher of
 * scripts/public-clients/redirect-yoto-hosts.js (preloaded; yoto-js's fetch honours it too).
 * The token is the demo user's (`seed --demo` prints it). A line per suite with its figures.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { prepareClient } from './public-clients/prepare-client.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PRELOAD = path.join(ROOT, 'scripts/public-clients/redirect-yoto-hosts.js');

const { values: args } = parseArgs({
  options: {
    'nodejs-client': { type: 'string' },
    'yoto-js': { type: 'string' },
    work: { type: 'string' },
    'model-timeout': { type: 'string', default: '60' },
  },
});
if (!args['nodejs-client'] || !args['yoto-js']) {
  process.stderr.write('usage: node scripts/public-clients-devices.js --nodejs-client DIR --yoto-js DIR [--work DIR] [--model-timeout SECONDS]\n');
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
if (seeded.code !== 0 || !token) throw new Error(`seed --demo failed: ${seeded.stderr}`);
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

// --- Two players in the demo family: Kitchen online (it reports), Hall offline ---
const kitchen = await api('POST', '/device-v2/devices/mine', token, { name: 'Kitchen' });
await api('POST', '/device-v2/devices/mine', token, { name: 'Hall' });
const reportStatus = () =>
  api('PUT', `/device-v2/${kitchen.device.deviceId}/status`, kitchen.credential.accessToken, { playbackStatus: 'stopped', userVolumePercentage: 50 });
await reportStatus();
const heartbeat = setInterval(() => void reportStatus().catch((err) => say(`status report failed: ${err.message}`)), 5000);
say(`cardshelf serving at ${base}; demo family players: Kitchen ${kitchen.device.deviceId} (online), Hall (offline)`);

let failures = 0;

// --- yoto-nodejs-client ---
const nodeDir = prepareClient(args['nodejs-client'], path.join(work, 'yoto-nodejs-client'), [['install', '--omit=dev']]);
await writeFile(
  path.join(nodeDir, '.env'),
  `YOTO_ACCESS_TOKEN=${token}\nYOTO_REFRESH_TOKEN=unused-the-access-token-outlives-the-tests\nYOTO_CLIENT_ID=yoto-nodejs-client-at-cardshelf\n`,
);
const nodeEnv = { ...process.env, CARDSHELF_URL: base, CLIENT_DIR: nodeDir, NODE_OPTIONS: `--import ${pathToFileURL(PRELOAD)}` };
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
  say(`INFO yoto-nodejs-client ${file} (needs the public service's MQTT broker): ${figures(model.stdout)}${stopped}`);
  for (const name of failedNames(model.stdout).slice(0, 8)) say(`  not ok: ${name}`);
  const mqtt = /mqtt[^\n]*/i.exec(model.stdout + model.stderr)?.[0];
  if (mqtt) say(`  first MQTT line: ${mqtt.slice(0, 200)}`);
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

clearInterval(heartbeat);
process.exit(failures ? 1 : 0);
