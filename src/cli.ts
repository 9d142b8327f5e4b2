import { parseArgs } from 'node:util';
import { loadOrCreateSigningKey, mintToken } from './auth/local-issuer.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrateToLatest } from './db/migrate.js';
import { openStore } from './db/store.js';
import { DEMO_USER, seedDemo } from './seed/demo.js';
import { AlreadySeeded, seedScale } from './seed/scale.js';
import { serve } from './server.js';
import { openMediaStore } from './media-store/open-media-store.js';
import { collectMediaGarbage } from './modules/media/gc.js';

const USAGE = `usage: cardshelf <command> [options]

commands:
  serve [--workers N]        start the server (PORT, DATA_DIR, DATABASE_URL, ... from the environment);
                             --workers N runs N processes sharing the port (default 1: one process)
  migrate                    apply pending database migrations
  token --sub ID [--scope "S1 S2"] [--expires-in 1h]
                             print a token signed by the local issuer (durations: 30s, 15m, 2h, 7d)
  seed --demo                load a small demo data set and print a token for its user
  seed --scale N [--cards-per-user 50] [--catalogue 200] [--prefix scale]
                             generate N users, each with a family, MYO cards with chapters,
                             library records, groups and wishlists (progress on stderr)
  media gc [--grace 7d] [--dry-run]
                             remove stored media nothing references, stored before the grace
                             period; prints what it removed (or would remove) as JSON

Settings come from the environment; see README.md.
`;

const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** Runs one command; resolves to the exit code. Only `token`, `seed --demo` and `media gc` write to stdout. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    (command ? process.stdout : process.stderr).write(USAGE);
    return command ? 0 : 2;
  }
  let config: Readonly<Config>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      err(e.message);
      return 2;
    }
    throw e;
  }
  switch (command) {
    case 'serve':
      return serveCommand(config, rest);
    case 'migrate':
      return migrate(config);
    case 'token':
      return token(config, rest);
    case 'seed':
      return seed(config, rest);
    case 'media':
      return mediaCommand(config, rest);
    default:
      err(`cardshelf: unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}

async function serveCommand(config: Readonly<Config>, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { workers: { type: 'string', default: '1' } } });
  const workers = positiveInt(values.workers);
  if (workers === undefined) {
    err(`cardshelf serve: --workers takes a whole number from 1 up, not '${values.workers}'`);
    return 2;
  }
  await serve(config, { workers });
  return 0;
}

/** A whole number >= 1 (underscores allowed: 1_000_000), or undefined. */
function positiveInt(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d[\d_]*$/.test(text)) return undefined;
  const n = Number(text.replaceAll('_', ''));
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

async function migrate(config: Readonly<Config>): Promise<number> {
  const store = openStore(config.database);
  try {
    const { results = [] } = await migrateToLatest(store);
    if (results.length === 0) err('migrations: already up to date');
    for (const r of results) err(`migration ${r.migrationName}: ${r.status}`);
    return 0;
  } finally {
    await store.db.destroy();
  }
}

async function token(config: Readonly<Config>, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      sub: { type: 'string' },
      scope: { type: 'string', default: '' },
      'expires-in': { type: 'string', default: '1h' },
    },
  });
  if (!values.sub) {
    err('cardshelf token: --sub is required, e.g. --sub "auth0|alice"');
    return 2;
  }
  if (config.auth.mode !== 'local') {
    err('cardshelf token: tokens come from the external issuer (AUTH_ISSUER is set)');
    return 2;
  }
  const key = await loadOrCreateSigningKey(config.auth.keyFile);
  try {
    const jwt = await mintToken(key, {
      sub: values.sub,
      scope: values.scope,
      expiresIn: values['expires-in'],
      issuer: config.auth.issuer,
      audience: config.auth.audience,
    });
    process.stdout.write(`${jwt}\n`);
    return 0;
  } catch (e) {
    err(`cardshelf token: ${(e as Error).message}`);
    return 2;
  }
}

async function seed(config: Readonly<Config>, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      demo: { type: 'boolean', default: false },
      scale: { type: 'string' },
      'cards-per-user': { type: 'string', default: '50' },
      catalogue: { type: 'string', default: '200' },
      prefix: { type: 'string', default: 'scale' },
    },
  });
  if (values.scale !== undefined) return seedScaleCommand(config, values);
  if (!values.demo) {
    err('cardshelf seed: say what to load: --demo, or --scale N');
    return 2;
  }
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    await seedDemo(store, config, err);
  } finally {
    await store.db.destroy();
  }
  err(`demo user: ${DEMO_USER}; the token below is valid for 24 hours`);
  return token(config, ['--sub', DEMO_USER, '--scope', 'user:content:manage family:library:manage', '--expires-in', '24h']);
}

async function mediaCommand(config: Readonly<Config>, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'gc') {
    err(`cardshelf media: the one subcommand is gc\n\n${USAGE}`);
    return 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: { grace: { type: 'string', default: '7d' }, 'dry-run': { type: 'boolean', default: false } },
  });
  const graceMs = durationMs(values.grace);
  if (graceMs === undefined) {
    err(`cardshelf media gc: --grace takes a duration such as 30m, 12h or 7d, not '${values.grace}'`);
    return 2;
  }
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    const report = await collectMediaGarbage(store, openMediaStore(config.media), {
      graceMs,
      dryRun: values['dry-run'],
    });
    err(`media gc: ${report.dryRun ? 'would remove' : 'removed'} ${report.removed.length} objects, ${report.bytes} bytes`);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return 0;
  } finally {
    await store.db.destroy();
  }
}

/** `30s`, `15m`, `2h`, `7d` in milliseconds, or undefined. */
function durationMs(text: string | undefined): number | undefined {
  const match = /^(\d+)(s|m|h|d)$/.exec(text ?? '');
  if (!match) return undefined;
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

async function seedScaleCommand(
  config: Readonly<Config>,
  values: { scale?: string; 'cards-per-user': string; catalogue: string; prefix: string },
): Promise<number> {
  const users = positiveInt(values.scale);
  const cardsPerUser = positiveInt(values['cards-per-user']);
  const catalogueCards = positiveInt(values.catalogue);
  if (users === undefined || cardsPerUser === undefined || catalogueCards === undefined) {
    err('cardshelf seed: --scale, --cards-per-user and --catalogue take whole numbers from 1 up');
    return 2;
  }
  if (!/^[a-z0-9-]{1,32}$/.test(values.prefix)) {
    err('cardshelf seed: --prefix is 1 to 32 characters of [a-z0-9-]');
    return 2;
  }
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    const r = await seedScale(store, { users, cardsPerUser, catalogueCards, prefix: values.prefix }, err);
    err(
      `seeded in ${r.seconds.toFixed(1)} s: ${r.users} users and families, ${r.cards} MYO cards, ` +
        `${r.catalogueCards} catalogue cards, ${r.libraryRecords} library records, ${r.groups} groups, ` +
        `${r.wishlists} wishlists, ${r.events} family events`,
    );
    return 0;
  } catch (e) {
    if (e instanceof AlreadySeeded) {
      err(`cardshelf seed: ${e.message}`);
      return 2;
    }
    throw e;
  } finally {
    await store.db.destroy();
  }
}
