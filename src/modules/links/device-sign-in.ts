import { remoteJson, type RemotePolicy } from './remote-http.js';
import { DEFAULT_POLL_SECONDS, SIGN_IN_SCOPE } from './rules.js';

/**
 * The remote's own sign-in, as an app on a device does it (RFC 8628), and its refresh and
 * revocation (RFC 6749 6, RFC 7009). The remote is another Cardshelf or the public service:
 * both answer the device flow's polling errors with 403 where RFC 8628 says 400, so any 4xx
 * with an OAuth `error` is read alike.
 */
export interface SignInTarget {
  authBaseUrl: string;
  clientId: string;
  audience: string | null;
}

export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string | null;
  expiresInSeconds: number;
  intervalSeconds: number;
}

export interface RemoteTokens {
  accessToken: string;
  /** Absent when the remote keeps the one it had (no rotation). */
  refreshToken: string | undefined;
  expiresInSeconds: number;
}

export type PollOutcome =
  | { kind: 'pending' }
  | { kind: 'slow-down' }
  | { kind: 'denied' }
  | { kind: 'expired' }
  | { kind: 'refused'; reason: string }
  | { kind: 'tokens'; tokens: RemoteTokens };

const OAUTH_ERROR_STATUSES = [400, 401, 403];

const endpoint = (target: SignInTarget, path: string): string => `${target.authBaseUrl.replace(/\/+$/, '')}${path}`;

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= 8192 ? value : undefined;
}

/**
 * The remote's OAuth `error` (RFC 6749 5.2), as messages may quote it: the codes the RFCs
 * register are lower-case words joined by `_` (`invalid_grant`, `slow_down`). Anything else, a
 * remote echoing what it was sent (a refresh token, a device code) among it, is left out, so
 * that a message built from it (a link's reason, a job's error, the log) never carries a secret.
 */
const OAUTH_ERROR_CODE = /^[a-z]+(?:_[a-z]+)*$/;

export function oauthErrorCode(body: Record<string, unknown>): string | undefined {
  const code = body.error;
  return typeof code === 'string' && code.length <= 64 && OAUTH_ERROR_CODE.test(code) ? code : undefined;
}

function seconds(value: unknown, fallback: number, max: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.min(Math.ceil(value), max) : fallback;
}

/** `POST /oauth/device/code`: the code the member enters at the remote. */
export async function startDeviceFlow(policy: RemotePolicy, target: SignInTarget): Promise<DeviceAuthorization> {
  const form: Record<string, string> = { client_id: target.clientId, scope: SIGN_IN_SCOPE };
  if (target.audience) form.audience = target.audience;
  const { body } = await remoteJson<Record<string, unknown>>(policy, endpoint(target, '/oauth/device/code'), { method: 'POST', form });
  const deviceCode = str(body.device_code);
  const userCode = str(body.user_code);
  const verificationUri = str(body.verification_uri);
  if (!deviceCode || !userCode || !verificationUri || !/^https?:\/\//i.test(verificationUri)) {
    throw new Error('the remote did not answer a device code, a user code and an http(s) verification URI');
  }
  const complete = str(body.verification_uri_complete);
  return {
    deviceCode,
    userCode,
    verificationUri,
    verificationUriComplete: complete && /^https?:\/\//i.test(complete) ? complete : null,
    expiresInSeconds: seconds(body.expires_in, 600, 3600),
    intervalSeconds: seconds(body.interval, DEFAULT_POLL_SECONDS, 60),
  };
}

function tokensOf(body: Record<string, unknown>): RemoteTokens {
  const accessToken = str(body.access_token);
  if (!accessToken) throw new Error('the remote answered no access token');
  return { accessToken, refreshToken: str(body.refresh_token), expiresInSeconds: seconds(body.expires_in, 3600, 86_400 * 30) };
}

/** One poll of `POST /oauth/token` with the device code. */
export async function pollDeviceFlow(policy: RemotePolicy, target: SignInTarget, deviceCode: string): Promise<PollOutcome> {
  const { status, body } = await remoteJson<Record<string, unknown>>(policy, endpoint(target, '/oauth/token'), {
    method: 'POST',
    form: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode, client_id: target.clientId },
    acceptStatus: OAUTH_ERROR_STATUSES,
  });
  if (status < 300) return { kind: 'tokens', tokens: tokensOf(body) };
  switch (body.error) {
    case 'authorization_pending':
      return { kind: 'pending' };
    case 'slow_down':
      return { kind: 'slow-down' };
    case 'access_denied':
      return { kind: 'denied' };
    case 'expired_token':
      return { kind: 'expired' };
    default:
      return { kind: 'refused', reason: `the remote refused the sign-in (${oauthErrorCode(body) ?? status})` };
  }
}

/** `POST /oauth/token` with the refresh token: new tokens, or an Error saying why not. */
export async function refreshTokens(policy: RemotePolicy, target: SignInTarget, refreshToken: string): Promise<RemoteTokens> {
  const { status, body } = await remoteJson<Record<string, unknown>>(policy, endpoint(target, '/oauth/token'), {
    method: 'POST',
    form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: target.clientId },
    acceptStatus: OAUTH_ERROR_STATUSES,
  });
  if (status >= 300) throw new RefreshRefused(`the remote refused to refresh the sign-in (${oauthErrorCode(body) ?? status}): link it again`);
  return tokensOf(body);
}

/** The remote said no to the refresh token for good: the link must be made again. */
export class RefreshRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefreshRefused';
  }
}

/** `POST /oauth/revoke` of the refresh token (RFC 7009); a failure is the remote's to forget. */
export async function revokeToken(policy: RemotePolicy, target: SignInTarget, refreshToken: string): Promise<void> {
  await remoteJson(policy, endpoint(target, '/oauth/revoke'), {
    method: 'POST',
    form: { token: refreshToken, token_type_hint: 'refresh_token', client_id: target.clientId },
    acceptStatus: [...OAUTH_ERROR_STATUSES, 404, 405],
  });
}
