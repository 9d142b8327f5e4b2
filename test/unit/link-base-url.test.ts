import { describe, expect, it } from 'vitest';
import { baseUrlOf } from '../../src/modules/links/service.js';
import { AppError } from '../../src/shared/errors.js';

/** A link's remote URLs (`apiBaseUrl`, `authBaseUrl`): absolute http(s), nothing but a place. */
describe('baseUrlOf', () => {
  it.each([
    ['https://api.example.com', 'https://api.example.com'],
    ['https://api.example.com/', 'https://api.example.com'],
    ['https://api.example.com/v1///', 'https://api.example.com/v1'],
    ['http://192.168.1.20:8080/cardshelf/', 'http://192.168.1.20:8080/cardshelf'],
    ['HTTPS://Login.Example.COM/', 'https://login.example.com'],
  ])('takes %s as %s', (value, expected) => {
    expect(baseUrlOf(value, 'apiBaseUrl')).toBe(expected);
  });

  it.each([
    ['an ftp URL', 'ftp://files.example.com', /apiBaseUrl must be an http\(s\) URL/],
    ['a file URL', 'file:///etc/passwd', /apiBaseUrl must be an http\(s\) URL/],
    ['a relative URL', '/api', /apiBaseUrl must be an absolute http\(s\) URL/],
    ['a host without a scheme', 'api.example.com', /must be an( absolute)? http\(s\) URL/],
    ['not a URL', 'not a url', /apiBaseUrl must be an absolute http\(s\) URL/],
    ['a user name', 'https://me@api.example.com', /apiBaseUrl must not carry a user name or password/],
    ['a password', 'https://me:secret@api.example.com', /apiBaseUrl must not carry a user name or password/],
    ['a query', 'https://api.example.com/?x=1', /apiBaseUrl must not carry a query or fragment/],
    ['a fragment', 'https://api.example.com/#top', /apiBaseUrl must not carry a query or fragment/],
  ])('refuses %s with 400 bad-request', (_what, value, message) => {
    let thrown: unknown;
    try {
      baseUrlOf(value, 'apiBaseUrl');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'bad-request', statusCode: 400 });
    expect((thrown as Error).message).toMatch(message);
  });
});
