/**
 * What token verification needs. The application's configuration builds it from the
 * environment (src/config.ts); the auth layer knows nothing of where it came from.
 */
export type AuthConfig =
  | { mode: 'local'; issuer: string; audience: string; keyFile: string }
  | { mode: 'oidc'; issuer: string; audience: string; jwksUrl: string };
