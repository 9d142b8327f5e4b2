import { readFile } from 'node:fs/promises';
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { cli, http, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

// Each case starts Node processes: slow on a busy machine, so a generous time limit.
describe(`cardshelf command on ${testDialect()}`, { timeout: 180_000 }, () => {
  let deployment: Deployment | undefined;
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
    server = undefined;
    deployment = undefined;
  });

  /** The tables of the deployment's database: none until something migrated it. */
  async function tables(): Promise<string[]> {
    const found = await deployment!.store().db.introspection.getTables();
    return found.map((t) => t.name).sort();
  }

  it('--version prints the package version and exits 0', async () => {
    const r = await cli(['--version'], {});
    expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('help of every command goes to stdout with exit 0, and runs nothing', async () => {
    deployment = await createDeployment();
    const commands = ['serve', 'migrate', 'token', 'seed'];
    // Help runs nothing: side by side, as the refusals below.
    const [gc, r, ...helps] = await Promise.all([
      cli(['media', 'gc', '--help'], deployment.env),
      cli(['help', 'token'], deployment.env),
      ...commands.map((command) => cli([command, '--help'], deployment!.env)),
    ]);
    for (const [i, command] of commands.entries()) {
      const help = helps[i]!;
      expect(help.code, `${command} --help: ${help.stderr}`).toBe(0);
      expect(help.stdout).toContain(`Usage: cardshelf ${command} [options]`);
    }
    expect(gc!.code, gc!.stderr).toBe(0);
    expect(gc!.stdout).toContain('Usage: cardshelf media gc [options]');
    expect(r!.code).toBe(0);
    expect(r!.stdout).toContain('--expires-in <duration>');
    expect(await tables()).toEqual([]);
  });

  it('refuses unknown commands, unknown options, extra arguments and bad values with exit 2, before running', async () => {
    deployment = await createDeployment();
    const cases: [string[], RegExp][] = [
      [[], /Usage: cardshelf/],
      [['bogus'], /unknown command 'bogus'/],
      [['migrate', '--anything'], /unknown option '--anything'/],
      [['migrate', 'now'], /too many arguments/],
      [['serve', '--workers', '0'], /--workers <n>.*'0' is invalid/],
      [['serve', '--port', '9'], /unknown option '--port'/],
      [['token'], /required option '--sub <id>'/],
      [['token', '--sub', 'x', '--expires-in', '3y'], /'3y' is invalid/],
      [['seed'], /--demo, or --scale N/],
      [['seed', '--demo', '--scale', '3'], /cannot be used with/],
      [['seed', '--scale', 'many'], /'many' is invalid/],
      [['media'], /Usage: cardshelf media/],
      [['media', 'gc', '--grace', 'soon'], /'soon' is invalid/],
      [['media', 'gc', '--force'], /unknown option '--force'/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args, deployment!.env)));
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, `cardshelf ${args.join(' ')}`).toBe(2);
      expect(r.stderr, `cardshelf ${args.join(' ')}`).toMatch(message);
      expect(r.stdout).toBe('');
    }
    expect(await tables()).toEqual([]);
  });

  it('refuses an invalid environment with exit 2', async () => {
    deployment = await createDeployment();
    const r = await cli(['migrate'], { ...deployment.env, PORT: 'eighty' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('invalid configuration');
    expect(await tables()).toEqual([]);
  });

  it('migrate creates the schema, and says so the second time', async () => {
    deployment = await createDeployment();
    const first = await cli(['migrate'], deployment.env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('migration 001-initial: Success');
    expect(await tables()).toContain('cards');
    const second = await cli(['migrate'], deployment.env);
    expect(second).toMatchObject({ code: 0, stderr: 'migrations: already up to date\n' });
  });

  it('token prints one JWT of the local issuer with the subject, scope and lifetime asked for', async () => {
    deployment = await createDeployment();
    const r = await cli(['token', '--sub', 'auth0|alice', '--scope', 'admin', '--expires-in', '2h'], deployment.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const claims = decodeJwt(r.stdout.trim());
    expect(claims).toMatchObject({ sub: 'auth0|alice', scope: 'admin', iss: 'urn:cardshelf:local', aud: 'cardshelf' });
    expect(claims.exp! - claims.iat!).toBe(7200);
  });

  it('seed --demo prints a token that sees the demo data through the server', async () => {
    deployment = await createDeployment();
    const seeded = await cli(['seed', '--demo'], deployment.env);
    expect(seeded.code, seeded.stderr).toBe(0);
    const token = seeded.stdout.trim();
    server = await startServer(deployment.env);
    const mine = await http(server.url, 'GET', '/content/mine', { token });
    expect(mine.status).toBe(200);
    expect(mine.body.cards.length).toBeGreaterThan(0);
    // The shape the public service returns, which its client libraries' own tests check.
    for (const summary of mine.body.cards) {
      expect(summary.metadata.media).toEqual({ duration: expect.any(Number), fileSize: expect.any(Number), hasStreams: false });
      const { body } = await http(server.url, 'GET', `/content/${summary.cardId}`, { token });
      for (const chapter of body.card.content.chapters) {
        expect(chapter).toMatchObject({ duration: expect.any(Number), fileSize: expect.any(Number), availableFrom: null });
        expect(chapter.display.icon16x16).toMatch(/^yoto:#[0-9a-f]{64}$/);
        for (const track of chapter.tracks) {
          expect(track).toMatchObject({ overlayLabel: expect.any(String), duration: expect.any(Number), fileSize: expect.any(Number), channels: 'stereo' });
          expect(track.trackUrl).toMatch(/^yoto:#[0-9a-f]{64}$/);
        }
      }
    }
    const library = await http(server.url, 'GET', '/card/family/library', { token });
    expect(library.status).toBe(200);
    expect(library.body.cards.length).toBeGreaterThan(0);
  });

  it('serve --workers 2 starts two workers, answers requests and exits 0 on SIGTERM', async () => {
    deployment = await createDeployment();
    server = await startServer(deployment.env, { args: ['--workers', '2'] });
    const token = await deployment.token('auth0|workers');
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => http(server!.url, 'GET', '/content/mine', { token })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(server.stdout()).toMatch(/"workers":2,.*"msg":"workers started"/);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
