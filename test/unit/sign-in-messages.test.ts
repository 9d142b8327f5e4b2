import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollDeviceFlow, refreshTokens, RefreshRefused, type SignInTarget } from '../../src/modules/links/device-sign-in.js';
import type { RemotePolicy } from '../../src/modules/links/remote-http.js';

/**
 * The remote's tokens are never logged (DECISIONS.md "Linked services"): the one piece of a
 * remote's answer that its messages quote (a link's reason, a job's error, and through them the
 * log) is its OAuth `error` code, taken only when it has the shape of one. A remote answering
 * with what it was sent, the refresh token or the device code, does not get it into a message.
 */
const REFRESH = 'Rt-9f8E7d6C5b4A3_refresh-token-sent';
const DEVICE = 'Dc-0a1B2c3D4e5F6_device-code-sent';

let server: http.Server;
let target: SignInTarget;
/** What `/oauth/token` answers next: its `error`. */
let answer: unknown;

const policy: RemotePolicy = { trustedHosts: ['127.0.0.1'], allowPrivateNetworks: false, timeoutMs: 5_000, maxJsonBytes: 1024 * 1024 };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: answer })));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  target = { authBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, clientId: 'client', audience: null };
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

const refreshMessage = async (): Promise<string> => {
  const err = await refreshTokens(policy, target, REFRESH).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(RefreshRefused);
  return (err as Error).message;
};

const pollReason = async (): Promise<string> => {
  const outcome = await pollDeviceFlow(policy, target, DEVICE);
  expect(outcome.kind).toBe('refused');
  return (outcome as { reason: string }).reason;
};

describe("the remote's OAuth error in messages", () => {
  it.each([
    ['a refresh', refreshMessage, 'invalid_grant', 'the remote refused to refresh the sign-in (invalid_grant): link it again'],
    ['a device code poll', pollReason, 'unauthorized_client', 'the remote refused the sign-in (unauthorized_client)'],
  ])('quotes a registered code after %s', async (_what, message, code, expected) => {
    answer = code;
    expect(await message()).toBe(expected);
  });

  it.each([
    ['the refresh token sent', REFRESH],
    ['the refresh token in a sentence', `invalid_grant: ${REFRESH} is revoked`],
    ['the device code sent', DEVICE],
    ['a long lower-case word', 'a'.repeat(65)],
    ['an object', { token: REFRESH }],
  ])('leaves out %s, quoting the status instead', async (_what, error) => {
    answer = error;
    for (const message of [await refreshMessage(), await pollReason()]) {
      expect(message).toMatch(/\(400\)/);
      expect(message).not.toContain(REFRESH);
      expect(message).not.toContain(DEVICE);
    }
  });
});
