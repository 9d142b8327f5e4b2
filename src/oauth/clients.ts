import { announceRevocations } from '../auth/revocations.js';
import type { Store } from '../db/dialect.js';
import { revokeGrants } from './grants.js';
import * as records from './oauth-records-repository.js';
import { DEVICE_GRANT, reservedClientIds } from './shims.js';

/**
 * Registered apps (`cardshelf client add|list|remove`): public clients (no secret, PKCE
 * required) with the redirect URIs the operator gave. They are rows of the engine's own storage
 * (model `Client` in `oauth_records`, src/oauth/adapter.ts), so every instance on one PostgreSQL
 * sees one as soon as it is added, and the engine finds them before it falls back to taking an
 * unknown id as an unregistered app (src/oauth/shims.ts), which may redirect to loopback only.
 */

export interface RegisteredClient {
  clientId: string;
  name: string;
  redirectUris: string[];
}

/** A refusal for the operator: what they gave cannot be registered. */
export class ClientRefused extends Error {}

const CLIENT_MODEL = 'Client';
const CLIENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;

/** The engine's metadata of a registered app. */
function metadataOf(client: RegisteredClient): Record<string, unknown> {
  return {
    client_id: client.clientId,
    client_name: client.name,
    // `native` lets a loopback redirect carry any port (RFC 8252 section 7.3), as the engine
    // does for native apps; https redirects are matched exactly.
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token', DEVICE_GRANT],
    response_types: ['code'],
    redirect_uris: client.redirectUris,
  };
}

/**
 * Checks the metadata as the engine will when it loads the client, so a client that would fail
 * at sign-in is refused here instead. Redirects are https, or http to a loopback address: the
 * sign-in pages' Content-Security-Policy lets a form lead nowhere else.
 */
async function validate(client: RegisteredClient, audience: string): Promise<void> {
  if (!CLIENT_ID.test(client.clientId)) throw new ClientRefused('a client id is 1 to 128 characters of [A-Za-z0-9._~-]');
  if (reservedClientIds(audience).has(client.clientId)) {
    throw new ClientRefused(`a client id cannot be ${client.clientId}: it is an audience of this API's tokens (an app's ID tokens would name it)`);
  }
  if (client.name.trim() === '' || client.name.length > 200) throw new ClientRefused('a client name is 1 to 200 characters');
  if (client.redirectUris.length === 0) throw new ClientRefused('give at least one --redirect-uri');
  for (const uri of client.redirectUris) {
    const url = URL.parse(uri);
    const loopback = url?.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    if (!url || !(url.protocol === 'https:' || loopback) || url.hash !== '') {
      throw new ClientRefused(`redirect URI ${uri}: it must be an https:// address, or http:// to 127.0.0.1, [::1] or localhost, without a #fragment`);
    }
  }
  // Loaded only here: the engine is big, and only this command and the server use it.
  const { default: Provider } = await import('oidc-provider');
  const engine = new Provider('http://localhost', { features: { deviceFlow: { enabled: true } }, responseTypes: ['code'] });
  try {
    await engine.Client.validate(metadataOf(client) as never);
  } catch (err) {
    const described = err as { error_description?: string; message?: string };
    throw new ClientRefused(described.error_description ?? described.message ?? String(err));
  }
}

/** `audience`: LOCAL_AUDIENCE, which no client id may equal (nor the public audience). */
export async function addClient(store: Store, client: RegisteredClient, audience: string): Promise<void> {
  await validate(client, audience);
  const fields = { payload: JSON.stringify(metadataOf(client)), grant_id: null, user_code: null, uid: null, expires_at: null };
  if (!(await records.insertRecordIfAbsent(store.db, CLIENT_MODEL, client.clientId, fields))) throw new ClientRefused(`client ${client.clientId} is registered already; remove it first`);
}

export async function listClients(store: Store): Promise<RegisteredClient[]> {
  const payloads = await records.listPayloads(store.db, CLIENT_MODEL);
  return payloads.map((payload) => {
    const md = JSON.parse(payload) as { client_id: string; client_name?: string; redirect_uris?: string[] };
    return { clientId: md.client_id, name: md.client_name ?? '', redirectUris: md.redirect_uris ?? [] };
  });
}

/**
 * Removes a registered app and ends its sign-ins: its grants, codes and refresh tokens go with it,
 * and its access tokens go on the revocation list (src/auth/revocations.ts). The id may still be
 * used afterwards, as any unregistered app's.
 */
export async function removeClient(store: Store, clientId: string): Promise<boolean> {
  const revoked = await store.db.transaction().execute(async (trx) => {
    if (!(await records.deleteRecord(trx, CLIENT_MODEL, clientId))) return undefined;
    const grantIds = await records.grantIdsBy(trx, 'client_id', clientId);
    await records.deleteRecordsBy(trx, 'client_id', clientId);
    return revokeGrants(trx, store, grantIds);
  });
  if (revoked) announceRevocations(store, revoked);
  return revoked !== undefined;
}
