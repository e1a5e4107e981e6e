import { DomainError } from '../common/errors';
import fc from 'fast-check';
import {
  fingerprintOf,
  IDEMPOTENCY_KEY_PATTERN,
  openApiPath,
  parseIdempotencyKey,
  recordIdOf,
  responseKeyOf,
  takesIdempotencyKey,
  type RequestParts,
} from './idempotency-key';
import { openResponse, sealResponse } from './sealed-response';

function refusal(value: string | string[]): string | null {
  try {
    parseIdempotencyKey(value);
    return null;
  } catch (error) {
    return error instanceof DomainError ? error.code : 'not a domain error';
  }
}

describe('parseIdempotencyKey', () => {
  it.each([
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['order:1001/retry#2', 'order:1001/retry#2'],
    ['"with space"', 'with space'],
    ['k'.repeat(255), 'k'.repeat(255)],
    [`"${'k'.repeat(255)}"`, 'k'.repeat(255)],
  ])('accepts %s as %s', (value, key) => {
    expect(parseIdempotencyKey(value)).toBe(key);
  });

  it.each([
    ['empty', ''],
    ['empty quotes', '""'],
    ['a space', 'a b'],
    ['two keys joined by a repeated header', 'a, b'],
    ['two quoted keys', '"a", "b"'],
    ['a backslash', 'a\\b'],
    ['an inner quote', 'a"b'],
    ['a character beyond ASCII', 'cl\u00e9'],
    ['a control character', 'a\tb'],
    ['256 characters', 'k'.repeat(256)],
  ])('refuses %s with INVALID_IDEMPOTENCY_KEY', (_name, value) => {
    expect(refusal(value)).toBe('INVALID_IDEMPOTENCY_KEY');
  });

  it('accepts exactly what the OpenAPI pattern describes', () => {
    const pattern = new RegExp(IDEMPOTENCY_KEY_PATTERN);
    const candidates = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', ',', '~', '\u00e9'), maxLength: 8 }),
      fc
        .tuple(
          fc.boolean(),
          fc.string({ unit: fc.constantFrom('a', '~', '!'), minLength: 250, maxLength: 260 }),
        )
        .map(([quoted, key]) => (quoted ? `"${key}"` : key)),
    );
    fc.assert(
      fc.property(candidates, (value) => {
        expect(refusal(value) === null).toBe(pattern.test(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a header given as a list', () => {
    expect(refusal(['a', 'b'])).toBe('INVALID_IDEMPOTENCY_KEY');
  });
});

describe('takesIdempotencyKey', () => {
  it.each([
    ['POST', '/data/{collection}', true],
    ['post', '/admin/users', true],
    ['PUT', '/project/{projectId}', true],
    ['DELETE', '/project/{projectId}', true],
    ['PUT', '/data/{collection}/{indexName}/{indexValue}', true],
    ['DELETE', '/data/{collection}/{indexName}/{indexValue}', true],
    ['PUT', '/profile', false],
    ['DELETE', '/api-keys/{id}', false],
    ['GET', '/project/{projectId}', false],
    ['PATCH', '/project/{projectId}', false],
    ['PATCH', '/data/{collection}/{indexName}/{indexValue}', true],
    ['POST', '/import', false],
  ])('%s %s → %s', (method, path, expected) => {
    expect(takesIdempotencyKey(method, path)).toBe(expected);
  });

  it('reads Express route paths as OpenAPI paths', () => {
    expect(openApiPath('/data/:collection/:indexName/:indexValue')).toBe(
      '/data/{collection}/{indexName}/{indexValue}',
    );
  });
});

describe('record ids and fingerprints', () => {
  const scope = { principal: 'user:ada', branch: '' };

  it('separates scopes and keys, and never contains the key', () => {
    const ids = new Set([
      recordIdOf(scope, 'k'),
      recordIdOf({ ...scope, principal: 'team:ada' }, 'k'),
      recordIdOf({ ...scope, branch: 'b' }, 'k'),
      recordIdOf(scope, 'k2'),
      // Concatenation would make these two equal.
      recordIdOf({ principal: 'user:a', branch: 'b' }, 'c'),
      recordIdOf({ principal: 'user:ab', branch: '' }, 'c'),
    ]);
    expect(ids.size).toBe(6);
    expect(recordIdOf(scope, 'secret-key')).not.toContain('secret-key');
    expect(recordIdOf(scope, 'k')).toBe(recordIdOf({ ...scope }, 'k'));
  });

  const base: RequestParts = {
    method: 'POST',
    path: '/data/notes',
    query: {},
    ifMatch: undefined,
    body: { item: { text: 'hi' } },
  };

  it('is the same for the same request and differs when any part differs', () => {
    expect(fingerprintOf({ ...base, body: { item: { text: 'hi' } } })).toBe(fingerprintOf(base));
    for (const changed of [
      { ...base, method: 'PUT' },
      { ...base, path: '/data/other' },
      { ...base, query: { a: '1' } },
      { ...base, ifMatch: '"x.1"' },
      { ...base, body: { item: { text: 'ho' } } },
      { ...base, body: undefined },
    ]) {
      expect(fingerprintOf(changed)).not.toBe(fingerprintOf(base));
    }
  });
});

describe('sealed responses', () => {
  const scope = { principal: 'user:ada', branch: '' };
  const response = {
    status: 201,
    headers: { 'content-type': 'application/json; charset=utf-8', etag: '"a.1"' },
    body: Buffer.from('{"apiKey":"pds_secret","ok":"\u00e9"}'),
  };

  it('opens with the key it was sealed with, byte for byte', () => {
    const key = responseKeyOf(scope, 'k');
    const opened = openResponse(sealResponse(response, key), key);
    expect(opened.status).toBe(201);
    expect(opened.headers).toEqual(response.headers);
    expect(opened.body.equals(response.body)).toBe(true);
  });

  it('keeps nothing readable and opens with no other key', () => {
    const sealed = sealResponse(response, responseKeyOf(scope, 'k'));
    expect(sealed.includes('pds_secret')).toBe(false);
    expect(() => openResponse(sealed, responseKeyOf(scope, 'other'))).toThrow();
    expect(() => openResponse(sealed, responseKeyOf({ ...scope, branch: 'b' }, 'k'))).toThrow();
  });
});
