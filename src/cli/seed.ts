import { Option, type Command } from 'commander';
import { createAccountService } from '../accounts/service.js';
import type { Config } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { AlreadySeeded, seedScale } from '../seed/scale.js';
import { positiveInt } from './option-parsers.js';
import { randomPassword } from './passwords.js';
import { EXIT, Refused, err, type Run } from './run.js';
import { token } from './token.js';

/** `cardshelf seed`. */
export function seedCommand(program: Command, run: Run): void {
  program
    .command('seed')
    .description('load data: a small demo set (printing a token for its user), or N generated users')
    .addOption(new Option('--demo', 'the demo family, cards and library; prints a token for its user').conflicts('scale'))
    .addOption(new Option('--scale <n>', 'generate N users, each with a family, MYO cards, library, groups, wishlists').argParser(positiveInt))
    .option('--cards-per-user <n>', 'MYO cards per generated user', positiveInt, 50)
    .option('--catalogue <n>', 'catalogue cards to generate', positiveInt, 200)
    .option('--prefix <prefix>', 'prefix of the generated ids ([a-z0-9-], 1 to 32)', 'scale')
    .action(run(seed));
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
  const { DEMO_USER, DEMO_EMAIL, seedDemo, seedDemoAccount } = await import('../seed/demo.js');
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
