import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DURATION_PATTERN, loadOrCreateSigningKey, mintToken } from './auth/local-issuer.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrateToLatest } from './db/migrate.js';
import { openStore } from './db/store.js';
import type { Store } from './db/dialect.js';
import { AlreadySeeded, seedScale } from './seed/scale.js';
import { openMediaStore } from './media-store/open-media-store.js';
import { collectMediaGarbage } from './modules/media/gc.js';
import type { DatabaseConfig } from './db/config.js';
import { ArchiveRefused, ImportConflicts } from './transfer/importer.js';
import type { ExportProgress } from './transfer/exporter.js';
import { createTransferService } from './transfer/service.js';
import { AccountRefused, createAccountService, type Account, type AccountService } from './accounts/service.js';
import { addClient, ClientRefused, listClients, removeClient, type RegisteredClient } from './oauth/clients.js';
import { CARDSHELF_VERSION } from './shared/version.js';
import { AppError } from './shared/errors.js';
import type { LinkJobOptions, LinkListOptions } from './link-commands.js';

/**
 * The exit codes of every command (README, "Command line"). Anything thrown that is not one
 * of the refusals below ends as FAILED (bin/cardshelf.js, src/main.ts).
 */
export const EXIT = {
  OK: 0,
  /** It ran and failed: the database unreachable, a worker failing, the shutdown deadline passed. */
  FAILED: 1,
  /** Refused before doing anything: the command line, the settings, or what was asked cannot be done as given. */
  USAGE: 2,
} as const;

/** A refusal with a message for the operator: exit 2, nothing done. */
class Refused extends Error {}


const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** A whole number >= 1 (underscores allowed: 1_000_000), for option parsers. */
function positiveInt(text: string): number {
  const n = /^\d[\d_]*$/.test(text) ? Number(text.replaceAll('_', '')) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('A whole number from 1 up is expected.');
  return n;
}

/** A family id as `PUT /admin/families/{familyId}` takes them. */
function familyId(text: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(text)) throw new InvalidArgumentError('A family id is 1 to 64 characters of [A-Za-z0-9_-].');
  return text;
}

function duration(text: string): string {
  if (!DURATION_PATTERN.test(text)) throw new InvalidArgumentError('A duration such as 30s, 15m, 2h or 7d is expected.');
  return text;
}

/** A duration (`30s`, `15m`, `2h`, `7d`) in milliseconds, for option parsers. */
function durationMs(text: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(text);
  if (!match) throw new InvalidArgumentError('A duration such as 30m, 12h or 7d is expected.');
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/**
 * Runs one command; resolves to its exit code (EXIT). Options are all checked before anything
 * runs, and the environment is read only once the command is known to be well-formed, so
 * `--help` and a mistyped option never touch a database. Only `token`, `seed --demo` (their
 * token), `media gc` (its report), `user list` (the accounts), `client list` (the apps) and `link` (links, jobs, each card's outcome) write to stdout; help and `--version` go to stdout too, everything else to stderr.
 */
export async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.OK;
  const run =
    <A extends unknown[]>(command: (config: Readonly<Config>, ...args: A) => Promise<number>) =>
    async (...args: A): Promise<void> => {
      code = await command(loadConfig(), ...args);
    };

  const program = new Command('cardshelf')
    .description("A server for families' audio-card libraries. Settings come from the environment (README.md).")
    .version(CARDSHELF_VERSION, '-V, --version', 'print the version and exit')
    .helpCommand('help [command]', 'show the help of a command')
    .showHelpAfterError('(cardshelf --help lists the commands; cardshelf <command> --help their options)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });

  program
    .command('serve')
    .description('start the server (PORT, DATA_DIR, DATABASE_URL, ... from the environment)')
    .option('--workers <n>', 'processes sharing the port (node:cluster)', positiveInt, 1)
    .action(run(async (config, opts: { workers: number }) => {
      // Loaded when run: the server (and the demo seed) bring Fastify, sharp and the rest, which
      // would double the memory of the data commands (export, import) that never use them.
      const { serve } = await import('./server.js');
      await serve(config, { workers: opts.workers });
      return EXIT.OK;
    }));

  program
    .command('migrate')
    .description('apply pending database migrations (the server also does on start)')
    .action(run(migrate));

  program
    .command('token')
    .description('print a token signed by the local issuer on stdout')
    .requiredOption('--sub <id>', "the user id (the token's subject), e.g. 'auth0|alice'")
    .option('--scope <scopes>', "space-separated scopes, e.g. 'user:content:manage family:library:manage' or 'admin'", '')
    .option('--expires-in <duration>', 'lifetime: 30s, 15m, 2h, 7d', duration, '1h')
    .action(run(token));

  program
    .command('seed')
    .description('load data: a small demo set (printing a token for its user), or N generated users')
    .addOption(new Option('--demo', 'the demo family, cards and library; prints a token for its user').conflicts('scale'))
    .addOption(new Option('--scale <n>', 'generate N users, each with a family, MYO cards, library, groups, wishlists').argParser(positiveInt))
    .option('--cards-per-user <n>', 'MYO cards per generated user', positiveInt, 50)
    .option('--catalogue <n>', 'catalogue cards to generate', positiveInt, 200)
    .option('--prefix <prefix>', 'prefix of the generated ids ([a-z0-9-], 1 to 32)', 'scale')
    .action(run(seed));

  const user = program.command('user').description('accounts: who may sign in (the user id is the `sub` of their tokens)');
  user
    .command('add')
    .description('add an account; without --password-stdin a random password is made and printed on stderr')
    .requiredOption('--email <email>', 'the email the account signs in with (one account per email, whatever its case)')
    .requiredOption('--name <name>', 'the name shown to the family')
    .option('--owner', 'an owner of this instance', false)
    .option('--password-stdin', 'read the password from stdin (one line)', false)
    .option('--user-id <id>', "claim an existing user id (e.g. 'auth0|alice') instead of a new one")
    .action(run(userAdd));
  user.command('list').description('list the accounts on stdout, one a line: user id, email, name, flags').action(run(userList));
  user
    .command('disable')
    .description('stop an account signing in; ends its sign-ins and revokes its tokens on every instance')
    .argument('<account>', 'its email or user id')
    .action(run(async (config, key: string) => userChange(config, (accounts) => accounts.setDisabled(key, true), 'disabled')));
  user
    .command('enable')
    .description('let a disabled account sign in again')
    .argument('<account>', 'its email or user id')
    .action(run(async (config, key: string) => userChange(config, (accounts) => accounts.setDisabled(key, false), 'enabled')));
  user
    .command('reset-password')
    .description('set a new password, ending its sign-ins and revoking its tokens; without --password-stdin a random one is made and printed on stderr')
    .argument('<account>', 'its email or user id')
    .option('--password-stdin', 'read the password from stdin (one line)', false)
    .action(run(async (config, key: string, opts: { passwordStdin: boolean }) => {
      const password = opts.passwordStdin ? await readPasswordFromStdin() : randomPassword();
      return userChange(config, (accounts) => accounts.resetPassword(key, password), 'password changed', opts.passwordStdin ? undefined : password);
    }));

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

  const link = program
    .command('link')
    .description("a member's linked services (accounts on another service; they are linked in the web app or through /user/links)");
  link
    .command('list')
    .description("a member's links and their latest jobs, as a table on stdout")
    .requiredOption('--user <id>', "the member's user id (the `sub` of their tokens)")
    .option('--jobs <n>', 'the latest jobs shown of each link', positiveInt, 5)
    .option('--json', 'print {"links": [...]} (each link as GET /user/links/{linkId} answers it, with its jobs) instead', false)
    .action(run(async (config, opts: LinkListOptions) => linkCommand(async (links) => links.linkList(config, opts))));
  for (const kind of ['pull', 'push'] as const) {
    const command = link
      .command(kind)
      .description(
        kind === 'pull'
          ? "bring cards home: copy the link's remote cards (every MYO card, or those named) to the member here"
          : "send cards out: copy the member's own MYO cards to the link's remote",
      )
      .requiredOption('--user <id>', "the member's user id (the `sub` of their tokens)")
      .requiredOption('--link <linkId>', 'one of their links (cardshelf link list)');
    const cards = (id: string, all: string[] | undefined): string[] => [...(all ?? []), id];
    if (kind === 'pull') command.option('--card <remoteCardId>', 'a remote card id; repeat for more (default: every MYO card of the remote account)', cards);
    else command.requiredOption('--card <cardId>', "one of the member's cards here; repeat for more", cards);
    command
      .option('--overwrite', `copy cards changed on both sides too (${kind === 'pull' ? 'the remote' : 'this side'} wins)`, false)
      .option('--no-wait', 'queue the job and exit, printing its id; a running server runs it')
      .option('--json', 'print the job as GET /user/links/{linkId}/jobs/{jobId} answers it, instead of a line a card', false)
      .action(run(async (config, opts: LinkJobOptions) => linkCommand(async (links) => links.linkJob(config, kind, opts))));
  }

  program
    .command('media')
    .description('stored media')
    .command('gc')
    .description('remove stored media nothing references, stored before the grace period; prints what it removed (or would remove) as JSON')
    .option('--grace <duration>', 'keep what was stored less than this long ago: 30m, 12h, 7d', durationMs, 7 * 86_400_000)
    .option('--dry-run', 'report what would be removed, remove nothing', false)
    .action(run(mediaGc));

  program
    .command('export')
    .description('write everything, or one family, as one archive (a gzipped tar: the rows, the media, a manifest)')
    .option('--family <id>', 'only this family: its members, their MYO cards, library, groups, wishlists, history and media', familyId)
    .option('--out <file>', 'the archive to write (default: stdout, unless it is a terminal)')
    .action(run(exportCommand));

  program
    .command('import')
    .description('load an archive into the configured database and media store; a damaged archive, a newer format or ids already taken are refused before anything is written')
    .argument('<file>', 'the archive, as cardshelf export wrote it')
    .option('--skip-conflicts', 'leave out the records whose ids are taken already (and the history of a family already there) instead of refusing', false)
    .action(run(importCommand));

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    // Commander has already written its message (or the help) to stderr / stdout.
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    if (e instanceof ConfigError || e instanceof Refused) {
      err(e instanceof Refused ? `cardshelf: ${e.message}` : e.message);
      return EXIT.USAGE;
    }
    throw e;
  }
}

/**
 * The link commands, loaded when run (they bring the media module: sharp, the transcoder); what
 * the links service refuses (a link not the member's, not signed in, a card not theirs) is the
 * operator's to fix: exit 2.
 */
async function linkCommand(work: (links: typeof import('./link-commands.js')) => Promise<number>): Promise<number> {
  try {
    return await work(await import('./link-commands.js'));
  } catch (e) {
    if (e instanceof AppError && e.statusCode < 500) throw new Refused(`link: ${e.message}`);
    throw e;
  }
}

async function migrate(config: Readonly<Config>): Promise<number> {
  const store = openStore(config.database);
  try {
    const { results = [] } = await migrateToLatest(store);
    if (results.length === 0) err('migrations: already up to date');
    for (const r of results) err(`migration ${r.migrationName}: ${r.status}`);
    return EXIT.OK;
  } finally {
    await store.db.destroy();
  }
}

interface TokenOptions {
  sub: string;
  scope: string;
  expiresIn: string;
}

async function token(config: Readonly<Config>, opts: TokenOptions): Promise<number> {
  if (config.auth.mode !== 'local') throw new Refused('token: tokens come from the external issuer (AUTH_ISSUER is set)');
  const key = await loadOrCreateSigningKey(config.auth.keyFile);
  const jwt = await mintToken(key, {
    sub: opts.sub,
    scope: opts.scope,
    expiresIn: opts.expiresIn,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
  });
  process.stdout.write(`${jwt}\n`);
  return EXIT.OK;
}

/** The account commands: AccountRefused (a taken email, a short password) is the operator's to fix: exit 2. */
async function withAccounts<T>(config: Readonly<Config>, work: (accounts: AccountService) => Promise<T>): Promise<T> {
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    return await work(createAccountService(store));
  } catch (e) {
    if (e instanceof AccountRefused) throw new Refused(`user: ${e.message}`);
    throw e;
  } finally {
    await store.db.destroy();
  }
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

/** 20 random characters from an alphabet without look-alikes (about 114 bits). */
function randomPassword(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return Array.from(randomBytes(20), (b) => alphabet[b % alphabet.length]).join('');
}

async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (password === '') throw new Refused('user: --password-stdin read no password');
  return password;
}

const describeAccount = (a: Account): string =>
  [a.userId, a.email, a.displayName, [a.owner && 'owner', a.disabled && 'disabled'].filter(Boolean).join(',') || '-'].join('\t');

interface UserAddOptions {
  email: string;
  name: string;
  owner: boolean;
  passwordStdin: boolean;
  userId?: string;
}

async function userAdd(config: Readonly<Config>, opts: UserAddOptions): Promise<number> {
  const password = opts.passwordStdin ? await readPasswordFromStdin() : randomPassword();
  const account = await withAccounts(config, (accounts) =>
    accounts.add({ email: opts.email, displayName: opts.name, password, owner: opts.owner, userId: opts.userId }),
  );
  err(`user add: ${describeAccount(account)}`);
  if (!opts.passwordStdin) err(`password: ${password}`);
  return EXIT.OK;
}

async function userList(config: Readonly<Config>): Promise<number> {
  const accounts = await withAccounts(config, (service) => service.list());
  for (const a of accounts) process.stdout.write(`${describeAccount(a)}\n`);
  return EXIT.OK;
}

async function userChange(
  config: Readonly<Config>,
  change: (accounts: AccountService) => Promise<Account>,
  what: string,
  newPassword?: string,
): Promise<number> {
  const account = await withAccounts(config, change);
  err(`user: ${account.email} (${account.userId}): ${what}`);
  if (newPassword) err(`password: ${newPassword}`);
  return EXIT.OK;
}

interface SeedOptions {
  demo?: boolean;
  scale?: number;
  cardsPerUser: number;
  catalogue: number;
  prefix: string;
}

async function seed(config: Readonly<Config>, opts: SeedOptions): Promise<number> {
  if (opts.scale !== undefined) return seedScaleCommand(config, { ...opts, scale: opts.scale });
  if (!opts.demo) throw new Refused('seed: say what to load: --demo, or --scale N');
  if (config.auth.mode !== 'local') throw new Refused('seed --demo: its token comes from the local issuer, and AUTH_ISSUER is set');
  const { DEMO_USER, DEMO_EMAIL, seedDemo, seedDemoAccount } = await import('./seed/demo.js');
  const store = openStore(config.database);
  const password = randomPassword();
  try {
    await migrateToLatest(store);
    await seedDemo(store, config, err);
    await seedDemoAccount(createAccountService(store), password);
  } finally {
    await store.db.destroy();
  }
  err(`demo user: ${DEMO_USER}; sign in as ${DEMO_EMAIL} with the password ${password}`);
  err('the token below is valid for 24 hours');
  return token(config, { sub: DEMO_USER, scope: 'user:content:manage family:library:manage', expiresIn: '24h' });
}

async function seedScaleCommand(config: Readonly<Config>, opts: SeedOptions & { scale: number }): Promise<number> {
  if (!/^[a-z0-9-]{1,32}$/.test(opts.prefix)) throw new Refused('seed: --prefix is 1 to 32 characters of [a-z0-9-]');
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    const r = await seedScale(
      store,
      { users: opts.scale, cardsPerUser: opts.cardsPerUser, catalogueCards: opts.catalogue, prefix: opts.prefix },
      err,
    );
    err(
      `seeded in ${r.seconds.toFixed(1)} s: ${r.users} users and families, ${r.cards} MYO cards, ` +
        `${r.catalogueCards} catalogue cards, ${r.libraryRecords} library records, ${r.groups} groups, ` +
        `${r.wishlists} wishlists, ${r.events} family events`,
    );
    return EXIT.OK;
  } catch (e) {
    if (e instanceof AlreadySeeded) throw new Refused(`seed: ${e.message}`);
    throw e;
  } finally {
    await store.db.destroy();
  }
}

interface MediaGcOptions {
  grace: number;
  dryRun: boolean;
}

async function mediaGc(config: Readonly<Config>, opts: MediaGcOptions): Promise<number> {
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    const report = await collectMediaGarbage(store, openMediaStore(config.media), { graceMs: opts.grace, dryRun: opts.dryRun });
    err(`media gc: ${report.dryRun ? 'would remove' : 'removed'} ${report.removed.length} objects, ${report.bytes} bytes`);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return EXIT.OK;
  } finally {
    await store.db.destroy();
  }
}

/**
 * Export and import run for minutes on a big instance: a statement may take longer than a
 * request's, and waiting for the servers' write lock is better than failing.
 */
function transferDatabase(database: DatabaseConfig): DatabaseConfig {
  return { ...database, statementTimeoutMs: Math.max(database.statementTimeoutMs, 120_000) };
}

/** A line on stderr every 2 seconds, when stderr is a terminal (never in a pipe or a log). */
function terminalProgress(): ((line: string) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  return (line) => {
    if (performance.now() - last < 2000) return;
    last = performance.now();
    err(line);
  };
}

interface ExportOptions {
  family?: string;
  out?: string;
}

async function exportCommand(config: Readonly<Config>, opts: ExportOptions): Promise<number> {
  if (opts.out === undefined && process.stdout.isTTY) throw new Refused('export: stdout is a terminal; give --out FILE or redirect it');
  const store = openStore(transferDatabase(config.database));
  // Written beside the target and renamed when whole: a failed export leaves no half archive.
  const partial = opts.out === undefined ? undefined : `${opts.out}.partial`;
  try {
    await migrateToLatest(store);
    const transfer = createTransferService(store, openMediaStore(config.media));
    const line = terminalProgress();
    const progress = line && ((p: ExportProgress) => line(`export: ${p.mediaObjects} media objects, ${p.rows.toLocaleString('en')} rows (${p.table || 'media'})`));
    const archive = opts.family === undefined ? transfer.instanceArchive(progress) : await transfer.familyArchive(opts.family, progress);
    if (!archive) throw new Refused(`export: there is no family ${opts.family}`);
    await pipeline(archive, partial === undefined ? process.stdout : createWriteStream(partial));
    if (partial !== undefined && opts.out !== undefined) {
      await rename(partial, opts.out);
      err(`export: wrote ${opts.out} (${(await stat(opts.out)).size} bytes)`);
    }
    return EXIT.OK;
  } catch (e) {
    if (partial !== undefined) await rm(partial, { force: true });
    throw e;
  } finally {
    await store.db.destroy();
  }
}

async function importCommand(config: Readonly<Config>, file: string, opts: { skipConflicts: boolean }): Promise<number> {
  if (!(await stat(file).catch(() => undefined))?.isFile()) throw new Refused(`import: ${file} is not a file`);
  const store = openStore(transferDatabase(config.database));
  try {
    await migrateToLatest(store);
    const transfer = createTransferService(store, openMediaStore(config.media));
    const report = await transfer.importArchive(() => createReadStream(file), {
      skipConflicts: opts.skipConflicts,
      maxMediaBytes: Math.max(config.media.maxAudioBytes, config.media.maxImageBytes),
      progress: terminalProgress(),
    });
    const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
    const written = Object.entries(report.rows).filter(([, n]) => n > 0).map(([table, n]) => `${table} ${n}`).join(', ');
    err(
      `import: ${total(report.rows)} rows written in ${report.seconds.toFixed(1)} s (${written || 'none'}), ` +
        `${report.mediaObjects} media objects, ${total(report.skipped)} rows left out`,
    );
    return EXIT.OK;
  } catch (e) {
    if (e instanceof ArchiveRefused) throw new Refused(`import: ${e.message}; nothing was written`);
    if (e instanceof ImportConflicts) {
      const examples = e.examples.map((c) => `${c.table} (${c.key}) ${c.value}`).join('; ');
      throw new Refused(
        `import: ${e.message} (${examples}${e.total > e.examples.length ? '; ...' : ''}); nothing was written. ` +
          'Give --skip-conflicts to import the rest.',
      );
    }
    throw e;
  } finally {
    await store.db.destroy();
  }
}
