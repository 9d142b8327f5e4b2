import type { KoaContextWithOIDC } from 'oidc-provider';
import { WEB_APP_CLIENT_ID } from './shims.js';

/**
 * The family web app is Cardshelf's own (served at /app/ by this instance): asking its users to
 * approve it would ask them to approve the service they are signing in to. Its grant is made or
 * widened here, to what it asks, before the engine's consent checks run (the engine's
 * `loadExistingGrant`), so it signs in without a consent page. Every other app, registered or
 * not, still finds only the grant it was given and is asked as before.
 */
export async function loadExistingGrant(ctx: KoaContextWithOIDC): Promise<InstanceType<KoaContextWithOIDC['oidc']['provider']['Grant']> | undefined> {
  const { oidc } = ctx;
  const client = oidc.client!;
  const session = oidc.session!;
  // The engine's own rule, first: the grant this sign-in just approved, else this browser's.
  const grantId = oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
  const found = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
  if (client.clientId !== WEB_APP_CLIENT_ID || !session.accountId) return found;

  const grant = found ?? new oidc.provider.Grant({ accountId: session.accountId, clientId: client.clientId });
  grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(' '));
  grant.addOIDCClaims([...oidc.requestParamClaims]);
  for (const [indicator, server] of Object.entries(oidc.resourceServers ?? {})) {
    const offered = new Set((server.scope ?? '').split(' '));
    const asked = [...oidc.requestParamScopes].filter((scope) => offered.has(scope));
    if (asked.length > 0) grant.addResourceScope(indicator, asked.join(' '));
  }
  await grant.save();
  return grant;
}
