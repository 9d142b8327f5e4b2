import { signal } from '@preact/signals';

/**
 * Signing in as the server's built-in public client `cardshelf-web` (src/oauth/shims.ts): the
 * authorization code flow with PKCE (S256) back to /app/callback, and refresh tokens, renewed a
 * minute before the access token expires. Tokens live in sessionStorage: they leave with the tab,
 * and the server's own sign-in session signs the next tab in without asking again.
 * With an external issuer (AUTH_ISSUER) the server has no sign-in of its own (no
 * /.well-known/openid-configuration): the person pastes an access token instead.
 */
export const CLIENT_ID = 'cardshelf-web';
const SCOPE = 'openid profile offline_access';
const TOKENS = 'cardshelf:tokens';
const PENDING = 'cardshelf:sign-in';
/** Renew this long before the access token expires. */
const EARLY_MS = 60_000;

interface Tokens {
  accessToken: string;
  refreshToken?: string;
  /** Milliseconds since the epoch. */
  expiresAt?: number;
}

interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

const redirectUri = (): string => `${location.origin}/app/callback`;

function load(): Tokens | undefined {
  const raw = sessionStorage.getItem(TOKENS);
  return raw ? (JSON.parse(raw) as Tokens) : undefined;
}

export const tokens = signal<Tokens | undefined>(load());

function store(next: Tokens | undefined): void {
  if (next) sessionStorage.setItem(TOKENS, JSON.stringify(next));
  else sessionStorage.removeItem(TOKENS);
  tokens.value = next;
  scheduleRefresh();
}

const base64url = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const randomString = (): string => base64url(crypto.getRandomValues(new Uint8Array(32)));

/** Whether this server signs people in itself (false with an external issuer). */
export async function hasOwnSignIn(): Promise<boolean> {
  const answer = await fetch('/.well-known/openid-configuration');
  return answer.ok;
}

/** Sends the browser to the server's sign-in page; it comes back to /app/callback. */
export async function signIn(returnTo: string): Promise<void> {
  const verifier = randomString();
  const state = randomString();
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, returnTo }));
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: redirectUri(),
    scope: SCOPE,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
  });
  location.assign(`/authorize?${query}`);
}

async function tokenRequest(form: Record<string, string>): Promise<Tokens> {
  const answer = await fetch('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: CLIENT_ID, ...form }),
  });
  const body = (await answer.json()) as TokenAnswer;
  if (!answer.ok) throw new Error(body.error_description ?? body.error ?? `HTTP ${answer.status}`);
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    expiresAt: body.expires_in ? Date.now() + body.expires_in * 1000 : undefined,
  };
}

/** /app/callback: trades the code for tokens; answers where to go next. */
export async function finishSignIn(query: URLSearchParams): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null') as { verifier: string; state: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING);
  if (query.get('error')) throw new Error(query.get('error_description') ?? query.get('error') ?? 'refused');
  if (!pending || query.get('state') !== pending.state) throw new Error('this sign-in was not started here; start again');
  store(await tokenRequest({ grant_type: 'authorization_code', code: query.get('code') ?? '', redirect_uri: redirectUri(), code_verifier: pending.verifier }));
  return pending.returnTo;
}

/** With an external issuer: the token the person pasted. */
export const useToken = (accessToken: string): void => store({ accessToken: accessToken.trim() });

let refreshing: Promise<boolean> | undefined;

/** A new access token from the refresh token; false (and signed out) when that fails. */
export function refresh(): Promise<boolean> {
  const refreshToken = tokens.value?.refreshToken;
  if (!refreshToken) {
    store(undefined);
    return Promise.resolve(false);
  }
  refreshing ??= tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken })
    .then((next) => (store(next), true))
    .catch(() => (store(undefined), false))
    .finally(() => (refreshing = undefined));
  return refreshing;
}

let timer: ReturnType<typeof setTimeout> | undefined;
function scheduleRefresh(): void {
  clearTimeout(timer);
  const { expiresAt, refreshToken } = tokens.value ?? {};
  if (!expiresAt || !refreshToken) return;
  timer = setTimeout(() => void refresh(), Math.max(0, expiresAt - Date.now() - EARLY_MS));
}
scheduleRefresh();

export async function signOut(): Promise<void> {
  const refreshToken = tokens.value?.refreshToken;
  store(undefined);
  if (refreshToken) {
    await fetch('/oauth/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: CLIENT_ID, token: refreshToken }),
    }).catch(() => undefined);
  }
}
