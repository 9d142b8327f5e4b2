import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import {
  ISO_MS,
  controlledClock,
  expectStatus,
  familyIdOf,
  mustAdd,
  newFamilyId,
  newUser,
  putCatalogueCard,
  putFamily,
} from '../support/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function getFamily(userId: string, query = ''): Promise<ReturnType<TestApp['call']> extends Promise<infer R> ? R : never> {
  return t.call('GET', `/user/family${query}`, { token: await t.token(userId, '') });
}

describe('GET /user/family: the stub family', () => {
  it('answers {"family": null} for a new user', async () => {
    const r = expectStatus(await getFamily(newUser('fresh')), 200);
    expect(r.body).toEqual({ family: null });
    expect(r.headers['content-type']).toMatch(/^application\/json/);
  });

  it('returns the stub family itself with allowStub=true', async () => {
    const user = newUser('stub');
    const before = Date.now();
    const r = expectStatus(await getFamily(user, '?allowStub=true'), 200);
    const family = r.body.family;
    expect(Object.keys(family).sort()).toEqual(['country', 'createdAt', 'devices', 'familyId', 'flags', 'members']);
    expect(family.familyId).toEqual(expect.any(String));
    expect(family.familyId.length).toBeGreaterThan(0);
    expect(family.country).toMatch(/^[A-Z]{2}$/);
    expect(family.country).toBe(t.config.defaultCountry);
    expect(family.createdAt).toMatch(ISO_MS);
    expect(Date.parse(family.createdAt)).toBeGreaterThanOrEqual(before - 5);
    expect(Date.parse(family.createdAt)).toBeLessThanOrEqual(Date.now() + 5);
    expect(family.devices).toEqual([]);
    expect(family.members).toEqual([]);
    expect(family.flags).toEqual({ sharingOn: false });
  });

  it('keeps the same stub family across calls, and each user has their own', async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const a1 = await familyIdOf(t, alice);
    const a2 = await familyIdOf(t, alice);
    const b = await familyIdOf(t, bob);
    expect(a2).toBe(a1);
    expect(b).not.toBe(a1);
  });

  it('creates exactly one stub family under concurrent first requests', async () => {
    const user = newUser('racer');
    const token = await t.token(user, '');
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => t.call('GET', '/user/family?allowStub=true', { token })),
    );
    const ids = new Set(replies.map((r) => expectStatus(r, 200).body.family.familyId));
    expect(ids.size).toBe(1);
    expect(await familyIdOf(t, user)).toBe([...ids][0]);
  });

  it.each([
    ['TRUE'],
    ['True'],
    ['1'],
    ['yes'],
    ['false'],
    [''],
    ['true%20'],
    ['%20true'],
  ])('allowStub=%s leaves the flag off', async (value) => {
    const user = newUser('flag');
    const r = expectStatus(await getFamily(user, `?allowStub=${value}`), 200);
    expect(r.body).toEqual({ family: null });
    // the same user with the exact string `true` does have a (stub) family
    expect((await getFamily(user, '?allowStub=true')).body.family).not.toBeNull();
  });

  it('needs a valid token (401 without), and no scope', async () => {
    const r = await t.call('GET', '/user/family');
    expect(r.status).toBe(401);
    expect(errorCode(r)).toBe('unauthorized');
    expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
    const bad = await t.call('GET', '/user/family', { token: 'not-a-jwt' });
    expect(bad.status).toBe(401);
    expect(errorCode(bad)).toBe('unauthorized');
  });
});

describe('GET /user/family?showhistory=true', () => {
  it('adds the history of a stub family (its creation)', async () => {
    const user = newUser('hist');
    const r = expectStatus(await getFamily(user, '?allowStub=true&showhistory=true'), 200);
    const { history } = r.body.family;
    expect(Array.isArray(history)).toBe(true);
    expect(history.length).toBe(1);
    expect(history[0].type).toBe('family-created');
    expect(history[0].at).toMatch(ISO_MS);
    expect(history[0].at).toBe(r.body.family.createdAt);
  });

  it.each([['TRUE'], ['1'], ['false'], ['']])('showhistory=%s adds no history', async (value) => {
    const user = newUser('nohist');
    const r = expectStatus(await getFamily(user, `?allowStub=true&showhistory=${value}`), 200);
    expect(r.body.family).not.toBeNull();
    expect(r.body.family).not.toHaveProperty('history');
  });

  it('showhistory alone does not reveal a stub family', async () => {
    const r = expectStatus(await getFamily(newUser('hs'), '?showhistory=true'), 200);
    expect(r.body).toEqual({ family: null });
  });

  it('lists events oldest first, with their details', async () => {
    const clock = controlledClock();
    const owner = newUser('owner');
    const other = newUser('other');
    const familyId = newFamilyId();
    expectStatus(await putFamily(t, familyId, { members: [{ userId: owner }] }), 201);
    clock.tick(3);
    expectStatus(
      await putFamily(t, familyId, { members: [{ userId: owner }, { userId: other }], devices: [{ deviceId: 'dev-h1' }] }),
      200,
    );
    clock.tick(3);
    const cardId = await putCatalogueCard(t, 'free');
    await mustAdd(t, owner, cardId);
    clock.tick(3);
    expectStatus(await putFamily(t, familyId, { members: [{ userId: owner }], devices: [{ deviceId: 'dev-h1' }] }), 200);

    const r = expectStatus(await getFamily(owner, '?showhistory=true'), 200);
    const history: Record<string, unknown>[] = r.body.family.history;
    const summary = history.map((e) => [e.type, e.cardId ?? e.userId ?? e.deviceId ?? null]);
    expect(summary).toEqual([
      ['family-created', null],
      ['member-added', owner],
      ['member-added', other],
      ['device-added', 'dev-h1'],
      ['card-added', cardId],
      ['member-removed', other],
    ]);
    for (const e of history) {
      expect(e.at).toMatch(ISO_MS);
      expect(e.type).toMatch(/^[a-z]+(-[a-z]+)*$/);
    }
    const ats = history.map((e) => e.at as string);
    expect([...ats].sort()).toEqual(ats);
    expect(history.find((e) => e.type === 'card-added')?.userId).toBe(owner);
  });
});

describe('PUT /admin/families/{familyId}', () => {
  it('creates a family (201) that its members see in GET /user/family', async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const familyId = newFamilyId();
    const before = Date.now();
    const put = await putFamily(t, familyId, {
      country: 'de',
      flags: { sharingOn: true },
      members: [
        { userId: alice, approved: true, verified: true, verifiedEmail: 'alice@example.com' },
        { userId: bob, approved: false, verified: false },
      ],
      devices: [{ deviceId: 'dev-a1' }, { deviceId: 'dev-a2' }],
    });
    expectStatus(put, 201);
    const family = put.body.family;
    expect(family.familyId).toBe(familyId);
    expect(family.country).toBe('DE');
    expect(family.flags).toEqual({ sharingOn: true });
    expect(family.createdAt).toMatch(ISO_MS);
    expect(Date.parse(family.createdAt)).toBeGreaterThanOrEqual(before - 5);
    expect(family.members).toEqual([
      {
        userId: alice,
        addedAt: expect.stringMatching(ISO_MS),
        approved: true,
        approvedAt: expect.stringMatching(ISO_MS),
        verified: true,
        verifiedEmail: 'alice@example.com',
      },
      { userId: bob, addedAt: expect.stringMatching(ISO_MS), approved: false, verified: false },
    ]);
    expect(family.devices).toEqual([
      { deviceId: 'dev-a1', addedAt: expect.stringMatching(ISO_MS) },
      { deviceId: 'dev-a2', addedAt: expect.stringMatching(ISO_MS) },
    ]);

    for (const user of [alice, bob]) {
      const r = expectStatus(await getFamily(user), 200);
      expect(r.body.family).toEqual(family);
    }
  });

  it('omits approvedAt for members not approved and verifiedEmail for members not verified', async () => {
    const u1 = newUser('u1');
    const u2 = newUser('u2');
    const u3 = newUser('u3');
    const put = expectStatus(
      await putFamily(t, newFamilyId(), {
        members: [
          // an email is given, but the member is not verified: it is not shown
          { userId: u1, approved: false, verified: false, verifiedEmail: 'hidden@example.com' },
          { userId: u2, approved: true, verified: true },
          { userId: u3 },
        ],
      }),
      201,
    );
    const [m1, m2, m3] = put.body.family.members;
    expect(m1).not.toHaveProperty('approvedAt');
    expect(m1).not.toHaveProperty('verifiedEmail');
    expect(m1).toMatchObject({ userId: u1, approved: false, verified: false });
    expect(m2).toHaveProperty('approvedAt');
    expect(m2).not.toHaveProperty('verifiedEmail');
    expect(m2).toMatchObject({ userId: u2, approved: true, verified: true });
    // approved and verified default to false
    expect(m3).toEqual({ userId: u3, addedAt: expect.stringMatching(ISO_MS), approved: false, verified: false });
  });

  it('replaces a family (200), keeping addedAt of the members and devices that stay', async () => {
    const clock = controlledClock();
    const stay = newUser('stay');
    const leave = newUser('leave');
    const join = newUser('join');
    const familyId = newFamilyId();
    const first = expectStatus(
      await putFamily(t, familyId, {
        members: [{ userId: stay, approved: true }, { userId: leave }],
        devices: [{ deviceId: 'dev-stay' }, { deviceId: 'dev-leave' }],
      }),
      201,
    ).body.family;
    clock.tick(10);
    const second = expectStatus(
      await putFamily(t, familyId, {
        country: 'FR',
        members: [{ userId: join }, { userId: stay, approved: true, verified: true, verifiedEmail: 's@example.com' }],
        devices: [{ deviceId: 'dev-new' }, { deviceId: 'dev-stay' }],
      }),
      200,
    ).body.family;

    expect(second.familyId).toBe(familyId);
    expect(second.createdAt).toBe(first.createdAt);
    expect(second.country).toBe('FR');
    // flags left out fall back to their default on a replace
    expect(second.flags).toEqual({ sharingOn: false });
    expect(second.members.map((m: { userId: string }) => m.userId)).toEqual([join, stay]);
    const stayBefore = first.members.find((m: { userId: string }) => m.userId === stay);
    const stayAfter = second.members.find((m: { userId: string }) => m.userId === stay);
    const joined = second.members.find((m: { userId: string }) => m.userId === join);
    expect(stayAfter.addedAt).toBe(stayBefore.addedAt);
    expect(stayAfter.approvedAt).toBe(stayBefore.approvedAt);
    expect(stayAfter.verifiedEmail).toBe('s@example.com');
    expect(joined.addedAt > stayBefore.addedAt).toBe(true);

    expect(second.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual(['dev-new', 'dev-stay']);
    const devBefore = first.devices.find((d: { deviceId: string }) => d.deviceId === 'dev-stay');
    const devAfter = second.devices.find((d: { deviceId: string }) => d.deviceId === 'dev-stay');
    const devNew = second.devices.find((d: { deviceId: string }) => d.deviceId === 'dev-new');
    expect(devAfter.addedAt).toBe(devBefore.addedAt);
    expect(devNew.addedAt > devBefore.addedAt).toBe(true);

    // the member who left no longer sees this family
    const left = expectStatus(await getFamily(leave, '?allowStub=true'), 200).body.family;
    expect(left.familyId).not.toBe(familyId);
    expect(left.members).toEqual([]);
    expect((await getFamily(leave)).body).toEqual({ family: null });
    // the one who stayed and the one who joined see the replaced family
    expect((await getFamily(stay)).body.family).toEqual(second);
    expect((await getFamily(join)).body.family).toEqual(second);
  });

  it('sets approvedAt when a member becomes approved, and drops it when they stop being approved', async () => {
    const clock = controlledClock();
    const user = newUser('appr');
    const familyId = newFamilyId();
    const first = expectStatus(await putFamily(t, familyId, { members: [{ userId: user }] }), 201).body.family;
    expect(first.members[0]).not.toHaveProperty('approvedAt');
    clock.tick(5);
    const second = expectStatus(await putFamily(t, familyId, { members: [{ userId: user, approved: true }] }), 200).body
      .family;
    expect(second.members[0].approved).toBe(true);
    expect(second.members[0].approvedAt).toMatch(ISO_MS);
    expect(second.members[0].approvedAt > first.members[0].addedAt).toBe(true);
    expect(second.members[0].addedAt).toBe(first.members[0].addedAt);
    const third = expectStatus(await putFamily(t, familyId, { members: [{ userId: user, approved: false }] }), 200).body
      .family;
    expect(third.members[0]).toEqual({ userId: user, addedAt: first.members[0].addedAt, approved: false, verified: false });
  });

  it('moves a listed user out of their own (stub) family into this one', async () => {
    const user = newUser('mover');
    const stubId = await familyIdOf(t, user);
    const familyId = newFamilyId();
    expectStatus(await putFamily(t, familyId, { members: [{ userId: user, approved: true }] }), 201);
    const now = expectStatus(await getFamily(user), 200).body.family;
    expect(now.familyId).toBe(familyId);
    expect(now.familyId).not.toBe(stubId);
    expect(now.members.map((m: { userId: string }) => m.userId)).toEqual([user]);
  });

  it('moves a member of one populated family into another, and leaves the first without them', async () => {
    const mover = newUser('mover');
    const keeper = newUser('keeper');
    const famA = newFamilyId('a');
    const famB = newFamilyId('b');
    expectStatus(await putFamily(t, famA, { members: [{ userId: mover }, { userId: keeper }] }), 201);
    expectStatus(await putFamily(t, famB, { members: [{ userId: mover }] }), 201);

    expect(expectStatus(await getFamily(mover), 200).body.family.familyId).toBe(famB);
    const a = expectStatus(await getFamily(keeper, '?showhistory=true'), 200).body.family;
    expect(a.familyId).toBe(famA);
    expect(a.members.map((m: { userId: string }) => m.userId)).toEqual([keeper]);
    expect(a.history.at(-1)).toMatchObject({ type: 'member-removed', userId: mover });

    // a replace of A that does not list the mover does not pull them back
    expectStatus(await putFamily(t, famA, { members: [{ userId: keeper }] }), 200);
    expect(expectStatus(await getFamily(mover), 200).body.family.familyId).toBe(famB);
  });

  it('moves a device listed by another family', async () => {
    const u1 = newUser('d1');
    const u2 = newUser('d2');
    const famA = newFamilyId('a');
    const famB = newFamilyId('b');
    expectStatus(await putFamily(t, famA, { members: [{ userId: u1 }], devices: [{ deviceId: 'dev-shared' }] }), 201);
    expectStatus(await putFamily(t, famB, { members: [{ userId: u2 }], devices: [{ deviceId: 'dev-shared' }] }), 201);
    expect((await getFamily(u1)).body.family.devices).toEqual([]);
    expect((await getFamily(u2)).body.family.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual([
      'dev-shared',
    ]);
  });

  it('a family with only devices is not a stub', async () => {
    // the admin describes the user's own stub family with a device only
    const user = newUser('devonly');
    const stubId = await familyIdOf(t, user);
    expect((await getFamily(user)).body).toEqual({ family: null });
    expectStatus(await putFamily(t, stubId, { devices: [{ deviceId: `dev-only-${stubId}` }] }), 200);
    const family = expectStatus(await getFamily(user), 200).body.family;
    expect(family.familyId).toBe(stubId);
    expect(family.members).toEqual([]);
    expect(family.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual([`dev-only-${stubId}`]);
  });

  it('an emptied family is a stub again', async () => {
    const user = newUser('emptied');
    const stubId = await familyIdOf(t, user);
    expectStatus(await putFamily(t, stubId, { devices: [{ deviceId: `dev-e-${stubId}` }] }), 200);
    expect((await getFamily(user)).body.family).not.toBeNull();
    expectStatus(await putFamily(t, stubId, { devices: [] }), 200);
    expect((await getFamily(user)).body).toEqual({ family: null });
    expect((await getFamily(user, '?allowStub=true')).body.family.familyId).toBe(stubId);
  });

  it('keeps extra flags as sent', async () => {
    const user = newUser('flags');
    const put = expectStatus(
      await putFamily(t, newFamilyId(), { flags: { sharingOn: true, beta: true }, members: [{ userId: user }] }),
      201,
    );
    expect(put.body.family.flags).toEqual({ sharingOn: true, beta: true });
    expect((await getFamily(user)).body.family.flags).toEqual({ sharingOn: true, beta: true });
  });

  it('refuses a member listed twice (400) and changes nothing', async () => {
    const user = newUser('dup');
    const familyId = newFamilyId();
    const r = await putFamily(t, familyId, { members: [{ userId: user }, { userId: user, approved: true }] });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    // nothing was created: the user still has no populated family
    expect((await getFamily(user)).body).toEqual({ family: null });
    // and the family does not exist: a correct PUT creates it (201)
    expectStatus(await putFamily(t, familyId, { members: [{ userId: user }] }), 201);
  });

  it('refuses a device listed twice (400)', async () => {
    const r = await putFamily(t, newFamilyId(), { devices: [{ deviceId: 'dev-x' }, { deviceId: 'dev-x' }] });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
  });

  it.each([['USA'], ['U'], [''], ['1A'], ['u$'], [42], [null]])('refuses country %j (400)', async (country) => {
    const r = await t.call('PUT', `/admin/families/${newFamilyId()}`, {
      token: await t.token('auth0|operator', 'admin'),
      body: { country, members: [] },
    });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
  });

  it('refuses a body without country (400)', async () => {
    const r = await t.call('PUT', `/admin/families/${newFamilyId()}`, {
      token: await t.token('auth0|operator', 'admin'),
      body: { members: [] },
    });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
  });

  it.each([
    [{ members: [{}] }],
    [{ members: [{ userId: '' }] }],
    [{ members: [{ userId: 42 }] }],
    [{ members: [{ userId: 'auth0|x', approved: 'yes' }] }],
    [{ devices: [{}] }],
    [{ devices: [{ deviceId: '' }] }],
    [{ members: 'nope' }],
  ])('refuses malformed members or devices %j (400)', async (body) => {
    const r = await t.call('PUT', `/admin/families/${newFamilyId()}`, {
      token: await t.token('auth0|operator', 'admin'),
      body: { country: 'US', ...body },
    });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
  });

  it('needs the admin scope (403 without, 401 without a token)', async () => {
    const familyId = newFamilyId();
    const body = { country: 'US', members: [] };
    const noScope = await t.call('PUT', `/admin/families/${familyId}`, {
      token: await t.token(newUser(), 'family:library:manage user:content:manage'),
      body,
    });
    expect(noScope.status).toBe(403);
    expect(errorCode(noScope)).toBe('forbidden');
    const noToken = await t.call('PUT', `/admin/families/${familyId}`, { body });
    expect(noToken.status).toBe(401);
    expect(errorCode(noToken)).toBe('unauthorized');
    // neither created the family
    expectStatus(await putFamily(t, familyId, {}), 201);
  });
});
