import type { Command } from 'commander';
import type { Config } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import type { Store } from '../db/dialect.js';
import { openStore } from '../db/store.js';
import { addClient, ClientRefused, listClients, removeClient, type RegisteredClient } from '../oauth/clients.js';
import { EXIT, Refused, err, type Run } from './run.js';

/** `cardshelf client add|list|remove`. */
export function clientCommands(program: Command, run: Run): void {
  const client = program.command('client').description('apps registered for sign-in: redirect flows to other than a loopback address need one');
  client
    .command('add')
    .description('register a public app (no secret, PKCE) and where sign-in may send its browser back')
    .argument('<client-id>', 'the id the app sends as client_id ([A-Za-z0-9._~-], 1 to 128)')
    .requiredOption('--name <name>', 'the name the approval page shows')
    .requiredOption('--redirect-uri <uri>', 'an https:// address, or http:// to a loopback address (any port); repeat for more', (uri: string, all: string[]) => [...all, uri], [] as string[])
    .action(run(async (config, clientId: string, opts: { name: string; redirectUri: string[] }) =>
      withClients(config, async (store) => {
        await addClient(store, { clientId, name: opts.name, redirectUris: opts.redirectUri }, config.auth.audience);
        err(`client add: ${clientId} (${opts.name}): ${opts.redirectUri.join(' ')}`);
        return EXIT.OK;
      }),
    ));
  client
    .command('list')
    .description('list the registered apps on stdout, one a line: client id, name, redirect URIs')
    .action(run(async (config) =>
      withClients(config, async (store) => {
        for (const c of await listClients(store)) process.stdout.write(`${describeClient(c)}\n`);
        return EXIT.OK;
      }),
    ));
  client
    .command('remove')
    .description("unregister an app and end its sign-ins (its refresh tokens stop working)")
    .argument('<client-id>')
    .action(run(async (config, clientId: string) =>
      withClients(config, async (store) => {
        if (!(await removeClient(store, clientId))) throw new Refused(`client: ${clientId} is not registered`);
        err(`client remove: ${clientId}: removed, its sign-ins ended`);
        return EXIT.OK;
      }),
    ));
}

/** The client commands: they need the embedded sign-in server; ClientRefused is the operator's to fix: exit 2. */
async function withClients(config: Readonly<Config>, work: (store: Store) => Promise<number>): Promise<number> {
  if (config.auth.mode !== 'local') throw new Refused('client: apps sign in at the external issuer (AUTH_ISSUER is set)');
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    return await work(store);
  } catch (e) {
    if (e instanceof ClientRefused) throw new Refused(`client: ${e.message}`);
    throw e;
  } finally {
    await store.db.destroy();
  }
}

const describeClient = (c: RegisteredClient): string => [c.clientId, c.name, c.redirectUris.join(' ')].join('\t');
