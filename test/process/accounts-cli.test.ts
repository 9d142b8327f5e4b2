import { afterEach, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { cli } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

describe(`cardshelf user on ${testDialect()}`, { timeout: 180_000 }, () => {
  let deployment: Deployment | undefined;
  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
  });

  it('adds an owner with a password from stdin, lists, refuses the same email in another case, disables, resets', async () => {
    deployment = await createDeployment();
    const env = deployment.env;
    const added = await cli(['user', 'add', '--email', 'Ann@Example.com', '--name', 'Ann', '--owner', '--password-stdin'], env, 'correct horse battery\n');
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe('');
    expect(added.stderr).not.toContain('password:');

    const accounts = createAccountService(deployment.store());
    const ann = await accounts.authenticate('ann@EXAMPLE.com', 'correct horse battery');
    expect(ann).toMatchObject({ email: 'Ann@Example.com', displayName: 'Ann', owner: true, disabled: false });
    expect(ann!.userId).toMatch(/^cardshelf\|/);
    expect(await accounts.authenticate('ann@example.com', 'correct horse battery\n')).toBeUndefined();

    const again = await cli(['user', 'add', '--email', 'ann@example.COM', '--name', 'Other'], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('has an account already');

    const claimed = await cli(['user', 'add', '--email', 'bob@example.com', '--name', 'Bob', '--user-id', 'auth0|bob'], env);
    expect(claimed.code, claimed.stderr).toBe(0);
    const generated = /password: (\S+)/.exec(claimed.stderr)?.[1];
    expect(generated).toBeDefined();
    expect(await accounts.authenticate('bob@example.com', generated!)).toMatchObject({ userId: 'auth0|bob', owner: false });

    const listed = await cli(['user', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n').map((line) => line.split('\t').slice(1))).toEqual([
      ['Ann@Example.com', 'Ann', 'owner'],
      ['bob@example.com', 'Bob', '-'],
    ]);

    const disabled = await cli(['user', 'disable', 'BOB@example.com'], env);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(await accounts.authenticate('bob@example.com', generated!)).toBeUndefined();
    expect((await cli(['user', 'list'], env)).stdout).toContain('bob@example.com\tBob\tdisabled');

    const reset = await cli(['user', 'reset-password', 'auth0|bob', '--password-stdin'], env, 'a new long password');
    expect(reset.code, reset.stderr).toBe(0);
    await cli(['user', 'enable', 'auth0|bob'], env);
    expect(await accounts.authenticate('bob@example.com', 'a new long password')).toMatchObject({ userId: 'auth0|bob' });
    expect(await accounts.authenticate('bob@example.com', generated!)).toBeUndefined();
  });

  it.each([
    [['user', 'add', '--email', 'not-an-email', '--name', 'X'], /not an email address/],
    [['user', 'add', '--email', 'x@example.com'], /required option '--name <name>'/],
    [['user', 'disable', 'nobody@example.com'], /there is no account nobody@example.com/],
  ])('refuses %j with exit 2', async (args, message) => {
    deployment = await createDeployment();
    const r = await cli(args, deployment.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('refuses a short password from stdin with exit 2, adding nothing', async () => {
    deployment = await createDeployment();
    const r = await cli(['user', 'add', '--email', 'c@example.com', '--name', 'C', '--password-stdin'], deployment.env, 'short\n');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('at least 10 characters');
    expect(await createAccountService(deployment.store()).list()).toEqual([]);
  });

  it.each([
    ['add', ['user', 'add', '--email', 'd@example.com', '--name', 'D', '--password-stdin'], 'aaaaaaaaaa'],
    ['reset-password', ['user', 'reset-password', 'e@example.com', '--password-stdin'], 'password123'],
  ])('user %s refuses a common password from stdin with exit 2, changing nothing', async (_name, args, password) => {
    deployment = await createDeployment();
    await migrateToLatest(deployment.store());
    const accounts = createAccountService(deployment.store());
    await accounts.add({ email: 'e@example.com', displayName: 'E', password: 'correct horse battery' });
    const r = await cli(args, deployment.env, `${password}\n`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('this password is too common or too easy to guess');
    expect(await accounts.find('d@example.com')).toBeUndefined();
    expect(await accounts.authenticate('e@example.com', 'correct horse battery')).toBeDefined();
  });

  it('seed --demo keeps stdout the token alone and prints the demo sign-in on stderr, which then works', async () => {
    deployment = await createDeployment();
    const seeded = await cli(['seed', '--demo'], deployment.env);
    expect(seeded.code, seeded.stderr).toBe(0);
    expect(seeded.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const [, email, password] = /sign in as (\S+) with the password (\S+)/.exec(seeded.stderr) ?? [];
    expect(email).toBe('parent@example.com');
    expect(await createAccountService(deployment.store()).authenticate(email!, password!)).toMatchObject({ userId: 'auth0|demo-parent' });
  });
});
