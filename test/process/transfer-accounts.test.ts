import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService, type Account } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { openMediaStore } from '../../src/media-store/open-media-store.js';
import { addClient, listClients } from '../../src/oauth/clients.js';
import { ARCHIVE_VERSION } from '../../src/transfer/archive-format.js';
import { ArchiveRefused, type ImportReport } from '../../src/transfer/importer.js';
import { createTransferService } from '../../src/transfer/service.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { createDeployment } from '../support/deployment.js';
import { cli } from '../support/processes.js';
import { adminToken, familyOf, newUser } from '../support/fixtures.js';
import { editTable, repack, rowsOf, unpack, type Entry } from '../support/archives.js';
import {
  accountSessionRow,
  invitationRow,
  oauthRecordRow,
  passkeyRow,
  setupLinkRow,
  throttleCounterRow,
  tokenRevocationRow,
} from '../support/rows.js';
import { testDialect, type TestDialect } from '../support/test-database.js';

/**
 * Sign-in in archives (issue 19, follow-up): an instance moved to a store of the other kind keeps
 * its accounts (the same email and password sign in), passkeys and registered apps, and not the
 * old server's sessions, invitations or throttle counters; a family's archive carries its
 * members' accounts only; an email taken here by another account is refused before anything is
 * written.
 */
const SOURCE = testDialect();
const TARGET: TestDialect = SOURCE === 'postgres' ? 'sqlite' : process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';
const PASSWORD = 'correct horse battery staple';
const LATER = '2999-01-01T00:00:00.000Z';

let source: TestApp;
let ann: Account;
let bob: Account;
let carol: Account;
let familyId: string;

/** Runs `use` with an account service and the store of `t`'s database (closed after). */
async function withStore<T>(t: TestApp, use: (store: ReturnType<typeof openStore>) => Promise<T>): Promise<T> {
  const store = openStore(t.config.database);
  try {
    return await use(store);
  } finally {
    await store.db.destroy();
  }
}

function importInto(t: TestApp, archive: Buffer): Promise<ImportReport> {
  return withStore(t, (store) =>
    createTransferService(store, openMediaStore(t.config.media)).importArchive(() => Readable.from([archive]), {
      skipConflicts: false,
      maxMediaBytes: Math.max(t.config.media.maxAudioBytes, t.config.media.maxImageBytes),
    }),
  );
}

async function exportOf(t: TestApp, query = ''): Promise<Buffer> {
  const r = await t.app.inject({ method: 'GET', url: `/admin/export${query}`, headers: { authorization: `Bearer ${await adminToken(t)}` } });
  expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
  return r.rawPayload;
}

/** What the password check says for these credentials on `t`. */
const signIn = (t: TestApp, email: string, password: string): Promise<Account | undefined> =>
  withStore(t, (store) => createAccountService(store).authenticate(email, password));

const passkey = (id: string, userId: string) =>
  passkeyRow({ id, user_id: userId, public_key: `pk-${id}`, counter: 7, transports: '["internal"]', name: `key ${id}`, created_at: '2026-01-01T00:00:00.000Z' });

beforeAll(async () => {
  source = await startTestApp({}, { dialect: SOURCE });
  await withStore(source, async (store) => {
    const accounts = createAccountService(store);
    ann = await accounts.add({ email: 'Ann@Example.com', displayName: 'Ann', password: PASSWORD, owner: true, userId: newUser('acx-ann') });
    bob = await accounts.add({ email: 'bob@example.com', displayName: 'Bob', password: `${PASSWORD} bob`, userId: newUser('acx-bob') });
    carol = await accounts.add({ email: 'carol@example.com', displayName: 'Carol', password: `${PASSWORD} carol`, userId: newUser('acx-carol') });
    await store.db.insertInto('passkeys').values([passkey('key-bob', bob.userId), passkey('key-carol', carol.userId)]).execute();
    await addClient(store, { clientId: 'shelf-app', name: 'Shelf', redirectUris: ['https://app.example/callback'] }, 'cardshelf');
    // What must not travel: a session (the engine's, the account page's), an invitation, a set-up link, a throttle counter.
    await store.db.insertInto('oauth_records').values(oauthRecordRow({ model: 'Session', id: 'live-session', uid: 'u1', expires_at: LATER, account_id: ann.userId, client_id: null })).execute();
    await store.db.insertInto('invitations').values(invitationRow({ secret_hash: 'f'.repeat(64), family_id: 'x', invited_by: ann.userId, created_at: LATER, expires_at: LATER })).execute();
    await store.db.insertInto('setup_links').values(setupLinkRow({ secret_hash: 'e'.repeat(64), created_at: LATER, expires_at: LATER })).execute();
    await store.db.insertInto('throttle_counters').values(throttleCounterRow({ key: 'signInEmail:bob@example.com', attempts: 3, last_attempt_at: LATER, locked_until: LATER })).execute();
    await store.db.insertInto('token_revocations').values(tokenRevocationRow({ kind: 'account', subject: bob.userId, revoked_at: '2026-01-01T00:00:00.000Z' })).execute();
    await store.db.insertInto('account_sessions').values(accountSessionRow({ id: 'd'.repeat(64), user_id: ann.userId, created_at: LATER, confirmed_at: LATER, expires_at: LATER })).execute();
  });
  familyId = await familyOf(source, [ann.userId, bob.userId]);
  await familyOf(source, [carol.userId]);
}, 60_000);
afterAll(async () => {
  await source?.close();
});

describe(`accounts move with an instance (${SOURCE} to ${TARGET})`, { timeout: 120_000 }, () => {
  it('export, import into an empty store: the same email and password sign in, passkeys and registered apps are there, sessions are not', async () => {
    const archive = await exportOf(source);
    const entries = await unpack(archive);
    expect((JSON.parse(entries[0]!.data.toString()) as { version: number }).version).toBe(ARCHIVE_VERSION);
    expect(rowsOf(entries, 'oauth_records').map((r) => [r.model, r.id])).toEqual([['Client', 'shelf-app']]);

    const target = await startTestApp({}, { dialect: TARGET });
    try {
      const report = await importInto(target, archive);
      expect(report.rows).toMatchObject({ accounts: 3, passkeys: 2, oauth_records: 1 });
      const signedIn = await signIn(target, 'ann@example.com', PASSWORD);
      expect(signedIn).toMatchObject({ userId: ann.userId, email: 'Ann@Example.com', owner: true, disabled: false });
      expect((await signIn(target, 'bob@example.com', `${PASSWORD} bob`))?.userId).toBe(bob.userId);
      expect(await signIn(target, 'ann@example.com', `${PASSWORD}!`)).toBeUndefined();
      await withStore(target, async (store) => {
        expect(await listClients(store)).toEqual([{ clientId: 'shelf-app', name: 'Shelf', redirectUris: ['https://app.example/callback'] }]);
        const keys = await store.db.selectFrom('passkeys').selectAll().orderBy('id').execute();
        expect(keys.map((k) => ({ ...k, counter: Number(k.counter) }))).toEqual([passkey('key-bob', bob.userId), passkey('key-carol', carol.userId)]);
        expect(await store.db.selectFrom('oauth_records').select('model').execute()).toEqual([{ model: 'Client' }]);
        for (const table of ['invitations', 'setup_links', 'throttle_counters', 'passkey_challenges', 'token_revocations', 'account_sessions'] as const) {
          expect(await store.db.selectFrom(table).selectAll().execute(), table).toEqual([]);
        }
      });
      // Exported again from the other store: the same bytes.
      expect((await exportOf(target)).equals(archive)).toBe(true);
    } finally {
      await target.close();
    }
  });

  it('an archive of format version 1 (no sign-in tables) still imports', async () => {
    let entries = await unpack(await exportOf(source));
    for (const table of ['accounts', 'passkeys', 'oauth_records']) entries = await editTable(entries, table, () => []);
    const v1 = entries.map((e) =>
      e.name === 'cardshelf-archive.json' || e.name === 'manifest.json' ? { ...e, data: Buffer.from(e.data.toString().replace(`"version":${ARCHIVE_VERSION}`, '"version":1')) } : e,
    );
    const target = await startTestApp({}, { dialect: TARGET });
    try {
      const report = await importInto(target, await repack(v1, { fixManifest: true }));
      expect(report.rows.family_memberships).toBe(3);
      expect(report.rows.accounts ?? 0).toBe(0);
    } finally {
      await target.close();
    }
  });
});

describe(`a family's archive carries its members' accounts (${TARGET})`, { timeout: 120_000 }, () => {
  it("the operator's: its members' accounts and passkeys, nobody else's, no registered apps; imported, they sign in, as users", async () => {
    const archive = await exportOf(source, `?familyId=${familyId}`);
    const entries = await unpack(archive);
    expect(rowsOf(entries, 'accounts').map((a) => a.user_id).sort()).toEqual([ann.userId, bob.userId].sort());
    expect(rowsOf(entries, 'passkeys').map((k) => k.id)).toEqual(['key-bob']);
    expect(rowsOf(entries, 'oauth_records')).toEqual([]);

    const target = await startTestApp({}, { dialect: TARGET });
    try {
      await importInto(target, archive);
      // Owning is the old server's role: the family's members come as users.
      expect(await signIn(target, 'ann@example.com', PASSWORD)).toMatchObject({ userId: ann.userId, owner: false });
      expect((await signIn(target, 'bob@example.com', `${PASSWORD} bob`))?.userId).toBe(bob.userId);
      expect(await signIn(target, 'carol@example.com', `${PASSWORD} carol`)).toBeUndefined();
    } finally {
      await target.close();
    }
  });

  it("a member's own download carries no accounts (no password hash of anyone)", async () => {
    const token = await source.token(bob.userId, 'user:content:manage family:library:manage');
    const r = await source.app.inject({ method: 'GET', url: '/user/family/export', headers: { authorization: `Bearer ${token}` } });
    expect(r.statusCode).toBe(200);
    const entries = await unpack(r.rawPayload);
    expect(rowsOf(entries, 'family_memberships')).toHaveLength(2);
    expect(rowsOf(entries, 'accounts')).toEqual([]);
    expect(rowsOf(entries, 'passkeys')).toEqual([]);
  });
});

describe(`refusals of sign-in rows, before anything is written (${TARGET})`, { timeout: 120_000 }, () => {
  let target: TestApp;
  let family: Entry[];
  let instance: Entry[];

  beforeAll(async () => {
    target = await startTestApp({}, { dialect: TARGET });
    family = await unpack(await exportOf(source, `?familyId=${familyId}`));
    instance = await unpack(await exportOf(source));
  });
  afterAll(async () => {
    await target?.close();
  });

  async function refused(archive: Buffer, message: RegExp): Promise<void> {
    const before = await exportOf(target);
    const err = await importInto(target, archive).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ArchiveRefused);
    expect((err as Error).message).toMatch(message);
    expect((await exportOf(target)).equals(before)).toBe(true);
  }

  it('an email that belongs to another account here', async () => {
    const other = await withStore(target, (store) => createAccountService(store).add({ email: 'ANN@example.com', displayName: 'Another Ann', password: 'another password' }));
    try {
      await refused(
        await repack(family, { fixManifest: true }),
        new RegExp(`^the archive's account ${escape(ann.userId)} has the email Ann@Example.com, which belongs to another account here, ${escape(other.userId)} \\(tables/15-accounts/000001\\.ndjson, line \\d\\)$`),
      );
      await refused(await repack(instance, { fixManifest: true }), /which belongs to another account here/);
      // The other account is untouched.
      expect((await signIn(target, 'ann@example.com', 'another password'))?.userId).toBe(other.userId);
    } finally {
      await withStore(target, (store) => createAccountService(store).remove(other.userId));
    }
  });

  it("an account or passkey of a non-member in a family's archive, registered apps in it, sign-ins in any archive", async () => {
    const carolsAccount = rowsOf(instance, 'accounts').find((a) => a.user_id === carol.userId)!;
    await refused(
      await repack(await editTable(family, 'accounts', (rows) => [...rows, carolsAccount]), { fixManifest: true }),
      new RegExp(`^the family archive of ${familyId} holds accounts of ${escape(carol.userId)}, who is not one of its members`),
    );
    await refused(
      await repack(await editTable(family, 'passkeys', (rows) => [...rows, passkey('key-carol', carol.userId)]), { fixManifest: true }),
      // Carol's account is not in it, and not in the target: named, it names nobody.
      new RegExp(`^dangling reference: passkeys\\.user_id names account ${escape(carol.userId)}, which is neither in the archive nor here`),
    );
    const client = rowsOf(instance, 'oauth_records')[0]!;
    await refused(
      await repack(await editTable(family, 'oauth_records', () => [client]), { fixManifest: true }),
      /holds registered apps: only a whole instance's archive carries them/,
    );
    const grant = { ...client, model: 'Grant', id: 'planted', account_id: ann.userId };
    await refused(
      await repack(await editTable(instance, 'oauth_records', (rows) => [...rows, grant]), { fixManifest: true }),
      /^an archive carries registered apps only, not Grant records/,
    );
    await refused(
      await repack(await editTable(instance, 'passkeys', (rows) => [...rows, passkey('key-nobody', 'auth0|nobody')]), { fixManifest: true }),
      /^dangling reference: passkeys\.user_id names account auth0\|nobody, which is neither in the archive nor here/,
    );
    await refused(
      await repack(await editTable(instance, 'accounts', (rows) => rows.map((a) => (a.user_id === bob.userId ? { ...a, email_key: 'ann@example.com' } : a))), { fixManifest: true }),
      /email_key is not the email's/,
    );
  });
});

describe(`cardshelf export and import carry accounts and registered apps (${SOURCE})`, { timeout: 180_000 }, () => {
  it('user add and client add on one instance; export, import on a fresh one: user list, client list, the password signs in', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-acx-'));
    const [from, to] = await Promise.all([createDeployment(), createDeployment()]);
    try {
      const added = await cli(['user', 'add', '--email', 'Dee@Example.com', '--name', 'Dee', '--owner', '--password-stdin'], from.env, `${PASSWORD}\n`);
      expect(added.code, added.stderr).toBe(0);
      const client = await cli(['client', 'add', 'moved-app', '--name', 'Moved', '--redirect-uri', 'https://moved.example/cb'], from.env);
      expect(client.code, client.stderr).toBe(0);
      const file = path.join(dir, 'all.tar.gz');
      const exported = await cli(['export', '--out', file], from.env);
      expect(exported.code, exported.stderr).toBe(0);
      const imported = await cli(['import', file], to.env);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stderr).toMatch(/^import: 2 rows written in [\d.]+ s \(accounts 1, oauth_records 1\), 0 media objects, 0 rows left out\n$/);

      expect((await cli(['user', 'list'], to.env)).stdout).toContain('Dee@Example.com\tDee');
      expect((await cli(['client', 'list'], to.env)).stdout).toContain('moved-app');
      expect((await createAccountService(to.store()).authenticate('dee@example.com', PASSWORD))?.owner).toBe(true);
      // Imported twice: the account is a conflict, refused (exit 2) as any id taken.
      const again = await cli(['import', file], to.env);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/conflict with data already there/);
    } finally {
      await from.close();
      await to.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const escape = (text: string): string => text.replace(/[|\\{}()[\]^$+*?.]/g, '\\$&');
