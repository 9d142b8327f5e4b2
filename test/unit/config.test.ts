import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const OIDC = {
  AUTH_ISSUER: 'https://issuer.example/',
  AUTH_AUDIENCE: 'https://api.example',
  AUTH_JWKS_URL: 'https://issuer.example/.well-known/jwks.json',
};

/** The ConfigError `fn` throws (failing the test when it throws nothing or something else). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig defaults', () => {
  const config = loadConfig({});
  const dataDir = path.resolve('./data');

  it('listens on 0.0.0.0:8080', () => {
    expect(config.port).toBe(8080);
    expect(config.host).toBe('0.0.0.0');
  });

  it('keeps its data in ./data, in SQLite', () => {
    expect(config.dataDir).toBe(dataDir);
    expect(config.database).toEqual({ kind: 'sqlite', file: path.join(dataDir, 'cardshelf.db'), statementTimeoutMs: 5000 });
  });

  it('is its own token issuer, with its key in the data directory', () => {
    expect(config.auth).toEqual({
      mode: 'local',
      issuer: 'urn:cardshelf:local',
      audience: 'cardshelf',
      keyFile: path.join(dataDir, 'signing-key.json'),
      // The embedded sign-in server issues from the public base URL, with the same key.
      signInIssuer: config.publicBaseUrl,
    });
  });

  it('has the documented limits and defaults', () => {
    expect(config.logLevel).toBe('info');
    expect(config.bodyLimit).toBe(1_048_576);
    expect(config.corsOrigin).toBe('*');
    expect(config.rateLimitPerMinute).toBe(0);
    expect(config.defaultCountry).toBe('US');
    expect(config.groupImageUrlTemplate).toContain('{imageId}');
  });

  it('is frozen', () => {
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty values as absent', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '', DATA_DIR: '' })).toEqual(config);
  });

  it('reads nothing but the object it is given', () => {
    expect(loadConfig({ UNRELATED: 'x', port: '1' })).toEqual(config);
  });
});

describe('loadConfig settings', () => {
  it('parses numbers', () => {
    const c = loadConfig({ PORT: '3000', BODY_LIMIT: '2048', RATE_LIMIT_PER_MINUTE: '60', DATABASE_POOL_SIZE: '3' });
    expect(c.port).toBe(3000);
    expect(c.bodyLimit).toBe(2048);
    expect(c.rateLimitPerMinute).toBe(60);
  });

  it('puts the database and the key under DATA_DIR, resolved', () => {
    const c = loadConfig({ DATA_DIR: 'some/where' });
    expect(c.dataDir).toBe(path.resolve('some/where'));
    expect(c.database).toEqual({ kind: 'sqlite', file: path.resolve('some/where/cardshelf.db'), statementTimeoutMs: 5000 });
    expect(c.auth.mode === 'local' && c.auth.keyFile).toBe(path.resolve('some/where/signing-key.json'));
  });

  it('takes SIGNING_KEY_FILE, LOCAL_ISSUER and LOCAL_AUDIENCE', () => {
    const c = loadConfig({ SIGNING_KEY_FILE: '/keys/k.json', LOCAL_ISSUER: 'urn:x', LOCAL_AUDIENCE: 'aud' });
    expect(c.auth).toEqual({ mode: 'local', issuer: 'urn:x', audience: 'aud', keyFile: path.resolve('/keys/k.json'), signInIssuer: c.publicBaseUrl });
  });

  it('switches to PostgreSQL with DATABASE_URL', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/cardshelf', DATABASE_POOL_SIZE: '7' });
    expect(c.database).toEqual({
      kind: 'postgres',
      url: 'postgres://u:p@db:5432/cardshelf',
      poolSize: 7,
      connectTimeoutMs: 5000,
      statementTimeoutMs: 5000,
      idleInTransactionTimeoutMs: 10000,
    });
    expect(loadConfig({ DATABASE_URL: 'postgresql://db/x' }).database).toMatchObject({
      kind: 'postgres',
      url: 'postgresql://db/x',
      poolSize: 10,
    });
  });

  it('takes REQUEST_TIMEOUT_MS (default 5 minutes, for uploads) and refuses less than a second', () => {
    expect(loadConfig({}).requestTimeoutMs).toBe(300_000);
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '45000' }).requestTimeoutMs).toBe(45_000);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '10' })).toThrow(/REQUEST_TIMEOUT_MS/);
  });

  it('takes the database bounds, and refuses ones too small to serve', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://db/x',
      DATABASE_CONNECT_TIMEOUT_MS: '1500',
      DATABASE_STATEMENT_TIMEOUT_MS: '2500',
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '3500',
      READY_TIMEOUT_MS: '700',
    });
    expect(c.database).toMatchObject({ connectTimeoutMs: 1500, statementTimeoutMs: 2500, idleInTransactionTimeoutMs: 3500 });
    expect(c.readyTimeoutMs).toBe(700);
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '800' }).database).toMatchObject({ kind: 'sqlite', statementTimeoutMs: 800 });
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' })).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS/);
    expect(() => loadConfig({ READY_TIMEOUT_MS: 'soon' })).toThrow(/READY_TIMEOUT_MS/);
  });

  it('switches to an external issuer when all three OIDC settings are given', () => {
    expect(loadConfig(OIDC).auth).toEqual({
      mode: 'oidc',
      issuer: OIDC.AUTH_ISSUER,
      audience: OIDC.AUTH_AUDIENCE,
      jwksUrl: OIDC.AUTH_JWKS_URL,
    });
  });

  it('splits a list of CORS origins', () => {
    expect(loadConfig({ CORS_ORIGIN: 'https://a.example, https://b.example,,' }).corsOrigin).toEqual([
      'https://a.example',
      'https://b.example',
    ]);
    expect(loadConfig({ CORS_ORIGIN: ' * ' }).corsOrigin).toBe('*');
  });

  it('signs media URLs with the default template and a secret of its own unless told', () => {
    expect(loadConfig({}).mediaUrlTemplate).toBe('http://localhost:8080/media/files/{hash}');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://shelf.example/' }).mediaUrlTemplate).toBe(
      'https://shelf.example/media/files/{hash}',
    );
    expect(loadConfig({}).mediaUrlSecret).toBeUndefined();
    const c = loadConfig({ MEDIA_URL_TEMPLATE: 'https://cdn.example/m/{hash}', MEDIA_URL_SECRET: 's'.repeat(32) });
    expect(c.mediaUrlTemplate).toBe('https://cdn.example/m/{hash}');
    expect(c.mediaUrlSecret).toBe('s'.repeat(32));
  });

  it('keeps media on the file system unless an S3 bucket is named', () => {
    expect(loadConfig({ DATA_DIR: '/srv/shelf' }).media).toMatchObject({ dir: '/srv/shelf/media', s3: undefined });
    const c = loadConfig({
      MEDIA_S3_BUCKET: 'shelf-media',
      MEDIA_S3_ENDPOINT: 'http://127.0.0.1:9000',
      MEDIA_S3_FORCE_PATH_STYLE: 'true',
      MEDIA_S3_ACCESS_KEY_ID: 'key',
      MEDIA_S3_SECRET_ACCESS_KEY: 'secret',
    });
    expect(c.media.s3).toEqual({
      bucket: 'shelf-media',
      prefix: '',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'key', secretAccessKey: 'secret' },
    });
    expect(loadConfig({ MEDIA_S3_BUCKET: 'shelf-media' }).media.s3?.credentials).toBeUndefined();
    expect(() => loadConfig({ MEDIA_S3_BUCKET: 'b12', MEDIA_S3_ACCESS_KEY_ID: 'key' })).toThrow(/go together/);
    expect(() => loadConfig({ MEDIA_S3_PREFIX: 'no-slash' })).toThrow(/MEDIA_S3_PREFIX/);
  });

  it('takes the other strings as given', () => {
    const c = loadConfig({ LOG_LEVEL: 'silent', DEFAULT_COUNTRY: 'DE', GROUP_IMAGE_URL_TEMPLATE: 'https://i/{imageId}.png', HOST: '127.0.0.1' });
    expect(c.logLevel).toBe('silent');
    expect(c.defaultCountry).toBe('DE');
    expect(c.groupImageUrlTemplate).toBe('https://i/{imageId}.png');
    expect(c.host).toBe('127.0.0.1');
  });
});

describe('loadConfig errors', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['BODY_LIMIT', '100'],
    ['BODY_LIMIT', 'lots'],
    ['RATE_LIMIT_PER_MINUTE', '-5'],
    ['DATABASE_POOL_SIZE', '0'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_LEVEL', 'INFO'],
    ['DEFAULT_COUNTRY', 'usa'],
    ['DEFAULT_COUNTRY', 'us'],
    ['DATABASE_URL', 'mysql://db/x'],
    ['DATABASE_URL', 'sqlite:///tmp/x.db'],
    ['GROUP_IMAGE_URL_TEMPLATE', 'https://images.example/groups/'],
    ['MEDIA_URL_TEMPLATE', 'https://media.example/'],
    ['MEDIA_URL_SECRET', 'short'],
  ])('refuses %s=%j, naming the setting', (key, value) => {
    const err = configError(() => loadConfig({ [key]: value }));
    expect(err.message).toContain(key);
  });

  it('refuses an AUTH_JWKS_URL that is not http(s)', () => {
    const err = configError(() => loadConfig({ ...OIDC, AUTH_JWKS_URL: 'ftp://issuer.example/jwks' }));
    expect(err.message).toContain('AUTH_JWKS_URL');
  });

  it('names every bad setting at once', () => {
    const err = configError(() => loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud', DEFAULT_COUNTRY: 'x' }));
    for (const key of ['PORT', 'LOG_LEVEL', 'DEFAULT_COUNTRY']) expect(err.message).toContain(key);
  });

  it.each([
    [{ AUTH_ISSUER: OIDC.AUTH_ISSUER }],
    [{ AUTH_AUDIENCE: OIDC.AUTH_AUDIENCE }],
    [{ AUTH_JWKS_URL: OIDC.AUTH_JWKS_URL }],
    [{ AUTH_ISSUER: OIDC.AUTH_ISSUER, AUTH_AUDIENCE: OIDC.AUTH_AUDIENCE }],
    [{ AUTH_ISSUER: OIDC.AUTH_ISSUER, AUTH_JWKS_URL: OIDC.AUTH_JWKS_URL }],
  ])('refuses a partial OIDC configuration %j', (env) => {
    const err = configError(() => loadConfig(env));
    expect(err.message).toMatch(/AUTH_ISSUER, AUTH_AUDIENCE and AUTH_JWKS_URL/);
  });
});

describe('metrics settings', () => {
  it('reads METRICS_ALLOW as addresses and CIDR ranges, and refuses anything else', () => {
    expect(loadConfig({ METRICS_ALLOW: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8' }).metrics.allow).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
    ]);
    for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.0/8/1', '::1/129', '1.2.3.4/x']) {
      expect(() => loadConfig({ METRICS_ALLOW: bad }), bad).toThrow(ConfigError);
    }
  });
});
