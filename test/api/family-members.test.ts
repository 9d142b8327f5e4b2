import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { ISO_MS, newUser, putFamily, newFamilyId } from '../support/fixtures.js';
import { Browser, field, formAction } from '../support/oauth-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * A family's members by name, approved and removed by its members (GET, PATCH and DELETE
 * /user/family/members): docs/api.md, "Family".
 */
describe(`family members on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost' });
  });
  afterAll(() => t?.close());

  const members = async (userId: string) => t.call('GET', '/user/family/members', { token: await t.token(userId) });

  /** `inviter` invites; a person named `name` joins by the link's form; answers their user id. */
  async function join(inviter: string, name: string, email: string): Promise<string> {
    const made = await t.call('POST', '/user/invitations', { token: await t.token(inviter) });
    expect(made.status).toBe(201);
    const browser = new Browser(t);
    const page = await browser.request('GET', new URL(made.body.invitation.url as string).pathname);
    const answer = await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), email, name, password: 'a long enough password' });
    expect(answer.status).toBe(200);
    // The page leads into the app: its Family page.
    expect(answer.text).toContain('<a href="http://localhost/app/family">Open Cardshelf and sign in</a>');
    const listed = (await members(inviter)).body.members as { userId: string; displayName: string | null }[];
    return listed.find((m) => m.displayName === name)!.userId;
  }

  it('lists members with their account names; the founder of a stub family who invites is listed approved, the newcomer waits', async () => {
    const founder = newUser('founder');
    const newcomer = await join(founder, 'Sam Second', 'sam@example.com');
    const seen = await members(founder);
    expect(seen.status).toBe(200);
    expect(seen.body.members).toEqual([
      { userId: founder, addedAt: expect.stringMatching(ISO_MS), approved: true, approvedAt: expect.stringMatching(ISO_MS), verified: false, displayName: null, self: true },
      { userId: newcomer, addedAt: expect.stringMatching(ISO_MS), approved: false, verified: false, displayName: 'Sam Second', self: false },
    ]);
    // The newcomer sees the same members, with `self` their own.
    expect((await members(newcomer)).body.members.map((m: { self: boolean }) => m.self)).toEqual([false, true]);
  });

  it('answers no members for a stub family', async () => {
    expect((await members(newUser('alone'))).body).toEqual({ members: [] });
  });

  it('an approved member approves a waiting one (once: the first time stays), which GET /user/family and its history show', async () => {
    const founder = newUser('approver');
    const newcomer = await join(founder, 'Ada Waiting', 'ada@example.com');
    const path = `/user/family/members/${encodeURIComponent(newcomer)}`;
    // A waiting member decides nothing, not even for the one who approves them.
    const refused = await t.call('PATCH', `/user/family/members/${encodeURIComponent(founder)}`, { token: await t.token(newcomer), body: { approved: true } });
    expect(refused.status).toBe(403);
    expect(errorCode(refused)).toBe('forbidden');

    const approved = await t.call('PATCH', path, { token: await t.token(founder), body: { approved: true } });
    expect(approved.status).toBe(200);
    expect(approved.body.member).toMatchObject({ userId: newcomer, approved: true, approvedAt: expect.stringMatching(ISO_MS), displayName: 'Ada Waiting' });
    const again = await t.call('PATCH', path, { token: await t.token(founder), body: { approved: true } });
    expect(again.body.member.approvedAt).toBe(approved.body.member.approvedAt);

    const family = await t.call('GET', '/user/family?showhistory=true', { token: await t.token(founder) });
    expect(family.body.family.members[1]).toMatchObject({ userId: newcomer, approved: true });
    expect(family.body.family.history.filter((e: { type: string }) => e.type === 'member-approved')).toEqual([
      { type: 'member-approved', at: expect.stringMatching(ISO_MS), userId: newcomer, by: founder },
    ]);
  });

  it('an approved member removes another: they leave (a stub family of their own), and the family no longer lists them', async () => {
    const founder = newUser('remover');
    const newcomer = await join(founder, 'Rex Removed', 'rex@example.com');
    const removed = await t.call('DELETE', `/user/family/members/${encodeURIComponent(newcomer)}`, { token: await t.token(founder) });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ status: 'ok' });
    expect((await members(founder)).body.members.map((m: { userId: string }) => m.userId)).toEqual([founder]);
    expect((await members(newcomer)).body).toEqual({ members: [] });
    const history = (await t.call('GET', '/user/family?showhistory=true', { token: await t.token(founder) })).body.family.history;
    expect(history.at(-1)).toEqual({ type: 'member-removed', at: expect.stringMatching(ISO_MS), userId: newcomer, by: founder });
  });

  it.each([
    ['a member of another family', 'other', 'DELETE', undefined, 404, 'not-found'],
    ['nobody', 'nobody', 'DELETE', undefined, 404, 'not-found'],
    ['oneself', 'self', 'DELETE', undefined, 400, 'bad-request'],
    ['oneself, approving', 'self', 'PATCH', { approved: true }, 400, 'bad-request'],
    ['approved: false', 'member', 'PATCH', { approved: false }, 400, 'bad-request'],
    ['another field', 'member', 'PATCH', { approved: true, verified: true }, 400, 'bad-request'],
    ['no body', 'member', 'PATCH', undefined, 400, 'bad-request'],
  ] as const)('refuses %s', async (_what, target, method, body, status, code) => {
    const parent = newUser('refuser');
    const member = newUser('member');
    const other = newUser('other');
    await putFamily(t, newFamilyId(), { members: [{ userId: parent, approved: true }, { userId: member }] });
    await putFamily(t, newFamilyId(), { members: [{ userId: other, approved: true }] });
    const userId = { other, nobody: 'auth0|nobody', self: parent, member }[target];
    const answer = await t.call(method, `/user/family/members/${encodeURIComponent(userId)}`, { token: await t.token(parent), body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(errorCode(answer)).toBe(code);
    // Nothing changed.
    expect((await members(parent)).body.members).toMatchObject([{ userId: parent, approved: true }, { userId: member, approved: false }]);
  });

  it('needs family:library:manage to approve or remove, and family:library:view to list', async () => {
    const parent = newUser('viewer');
    const member = newUser('member');
    await putFamily(t, newFamilyId(), { members: [{ userId: parent, approved: true }, { userId: member }] });
    const viewOnly = await t.token(parent, 'family:library:view');
    expect((await t.call('GET', '/user/family/members', { token: viewOnly })).status).toBe(200);
    const path = `/user/family/members/${encodeURIComponent(member)}`;
    expect((await t.call('PATCH', path, { token: viewOnly, body: { approved: true } })).status).toBe(403);
    expect((await t.call('DELETE', path, { token: viewOnly })).status).toBe(403);
    expect((await t.call('GET', '/user/family/members', { token: await t.token(parent, 'user:content:view') })).status).toBe(403);
  });
});
