/**
 * The scopes of DECISIONS.md. A route names the scope it needs, or `null` when any valid token
 * will do. A `:manage` scope includes the matching `:view`.
 */
export const SCOPES = {
  contentView: 'user:content:view',
  contentManage: 'user:content:manage',
  libraryView: 'family:library:view',
  libraryManage: 'family:library:manage',
  admin: 'admin',
  /** A registered player's own: report its status, receive its commands (src/auth/player-credential.ts). */
  player: 'device:player',
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

export function grants(held: ReadonlySet<string>, required: Scope | null): boolean {
  if (required === null || held.has(required)) return true;
  return required.endsWith(':view') && held.has(`${required.slice(0, -':view'.length)}:manage`);
}

/** Scopes from the space-separated `scope` claim and from a `permissions` array claim. */
export function scopesOf(claims: { readonly [claim: string]: unknown }): Set<string> {
  const scopes = new Set<string>();
  if (typeof claims.scope === 'string') {
    for (const s of claims.scope.split(' ')) if (s) scopes.add(s);
  }
  if (Array.isArray(claims.permissions)) {
    for (const p of claims.permissions) if (typeof p === 'string' && p) scopes.add(p);
  }
  return scopes;
}
