import type { Command } from 'commander';
import { AccountRefused, createAccountService, type Account, type AccountService } from '../accounts/service.js';
import type { Config } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { randomPassword, readPasswordFromStdin } from './passwords.js';
import { EXIT, Refused, err, type Run } from './run.js';

/** `cardshelf user add|list|disable|enable|reset-password`. */
export function userCommands(program: Command, run: Run): void {
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
