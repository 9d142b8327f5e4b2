/**
 * What token verification needs. The application's configuration builds it from the
 * environment (src/config.ts); the auth layer knows nothing of where it came from.
 */
export type AuthConfig =
  /** `signInIssuer`: the embedded sign-in server's issuer (the public base URL), which signs with the same key. */
  | { mode: 'local'; issuer: string; audience: string; keyFile: string; signInIssuer: string }
  /** `tokenType`: the `typ` header its access tokens must carry (unset: not checked). */
  | { mode: 'oidc'; issuer: string; audience: string; jwksUrl: string; tokenType?: string };
