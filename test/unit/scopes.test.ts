import { describe, expect, it } from 'vitest';
import { SCOPES, grants, scopesOf } from '../../src/auth/scopes.js';

const held = (...scopes: string[]): Set<string> => new Set(scopes);

describe('grants', () => {
  it('lets any token through when the route needs no scope', () => {
    expect(grants(held(), null)).toBe(true);
    expect(grants(held('admin'), null)).toBe(true);
  });

  it.each(Object.values(SCOPES))('grants %s to a holder of exactly that scope', (scope) => {
    expect(grants(held(scope), scope)).toBe(true);
    expect(grants(held('openid', scope, 'email'), scope)).toBe(true);
  });

  it.each(Object.values(SCOPES))('refuses %s to a token with no scopes', (scope) => {
    expect(grants(held(), scope)).toBe(false);
  });

  it('lets a manage scope include its view scope', () => {
    expect(grants(held('user:content:manage'), 'user:content:view')).toBe(true);
    expect(grants(held('family:library:manage'), 'family:library:view')).toBe(true);
  });

  it('does not let a view scope include its manage scope', () => {
    expect(grants(held('user:content:view'), 'user:content:manage')).toBe(false);
    expect(grants(held('family:library:view'), 'family:library:manage')).toBe(false);
  });

  it('does not let a manage scope include the view of another resource', () => {
    expect(grants(held('user:content:manage'), 'family:library:view')).toBe(false);
    expect(grants(held('family:library:manage'), 'user:content:view')).toBe(false);
    expect(grants(held('user:content:manage'), 'family:library:manage')).toBe(false);
  });

  it('does not treat admin as a super-scope, nor any user scope as admin', () => {
    for (const scope of [SCOPES.contentView, SCOPES.contentManage, SCOPES.libraryView, SCOPES.libraryManage]) {
      expect(grants(held('admin'), scope)).toBe(false);
      expect(grants(held(scope), 'admin')).toBe(false);
    }
    expect(grants(held(SCOPES.contentManage, SCOPES.libraryManage), 'admin')).toBe(false);
  });

  it('matches whole scope names only, case-sensitively', () => {
    for (const scope of ['user:content:views', 'user:content', 'USER:CONTENT:VIEW', 'user:content:view ', ':view']) {
      expect(grants(held(scope), 'user:content:view')).toBe(false);
    }
    for (const scope of ['user:content:manager', 'user:content:manage:all', 'user:contents:manage', 'Admin', 'administrator']) {
      expect(grants(held(scope), 'user:content:view')).toBe(false);
      expect(grants(held(scope), 'admin')).toBe(false);
    }
  });
});

describe('scopesOf', () => {
  it('reads the space-separated scope claim', () => {
    expect([...scopesOf({ scope: 'openid user:content:view admin' })].sort()).toEqual(
      ['admin', 'openid', 'user:content:view'],
    );
  });

  it('ignores repeated, leading and trailing spaces', () => {
    expect([...scopesOf({ scope: '  a   b  ' })].sort()).toEqual(['a', 'b']);
    expect([...scopesOf({ scope: '' })]).toEqual([]);
    expect([...scopesOf({ scope: '   ' })]).toEqual([]);
  });

  it('reads the permissions array claim', () => {
    expect([...scopesOf({ permissions: ['family:library:manage', 'admin'] })].sort()).toEqual([
      'admin',
      'family:library:manage',
    ]);
  });

  it('unites scope and permissions, without duplicates', () => {
    const scopes = scopesOf({ scope: 'a b', permissions: ['b', 'c'] });
    expect([...scopes].sort()).toEqual(['a', 'b', 'c']);
    expect(scopes.size).toBe(3);
  });

  it('skips permissions that are not non-empty strings', () => {
    expect([...scopesOf({ permissions: ['ok', '', 5, null, { scope: 'x' }, ['y'], true] })]).toEqual(['ok']);
  });

  it('ignores claims of the wrong type', () => {
    expect([...scopesOf({ scope: ['admin'], permissions: 'admin' })]).toEqual([]);
    expect([...scopesOf({ scope: 42, permissions: { admin: true } })]).toEqual([]);
    expect([...scopesOf({ scope: null, permissions: null })]).toEqual([]);
  });

  it('has nothing when neither claim is there', () => {
    expect(scopesOf({ sub: 'auth0|x', scp: 'admin', roles: ['admin'] }).size).toBe(0);
  });

  it('gives what grants expects: a manage permission includes view', () => {
    expect(grants(scopesOf({ permissions: ['user:content:manage'] }), 'user:content:view')).toBe(true);
    expect(grants(scopesOf({ scope: 'user:content:view' }), 'user:content:manage')).toBe(false);
  });
});
