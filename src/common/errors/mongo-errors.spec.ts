import {
  isDatabaseUnavailable,
  isDuplicateKeyError,
  isIndexConflict,
  isNamespaceNotFound,
  isNotImplemented,
  isUniqueViolation,
} from './mongo-errors';

function named(name: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error('x'), { name }, fields);
}

describe('driver error classification', () => {
  it.each([
    'MongoServerSelectionError',
    'MongoNetworkError',
    'MongoNetworkTimeoutError',
    'MongoNotConnectedError',
    'PoolClearedOnNetworkError',
  ])('treats %s as the database being unavailable', (name) => {
    expect(isDatabaseUnavailable(named(name))).toBe(true);
  });

  it('treats MaxTimeMSExpired (50) as too slow, and other server errors as not', () => {
    expect(isDatabaseUnavailable(named('MongoServerError', { code: 50 }))).toBe(true);
    expect(isDatabaseUnavailable(named('MongoServerError', { code: 2 }))).toBe(false);
    expect(isDatabaseUnavailable(new Error('plain'))).toBe(false);
    expect(isDatabaseUnavailable('string')).toBe(false);
  });

  it('treats a bulk write that could not reach the server as unavailable, and one with write errors as not', () => {
    const bulk = (fields: Record<string, unknown>) =>
      named('MongoBulkWriteError', { writeErrors: [], ...fields });
    expect(isDatabaseUnavailable(bulk({ beforeHandshake: false }))).toBe(true);
    expect(isDatabaseUnavailable(bulk({ reason: {} }))).toBe(true);
    expect(isDatabaseUnavailable(bulk({}))).toBe(false);
    expect(
      isDatabaseUnavailable(bulk({ beforeHandshake: false, writeErrors: [{ code: 11000 }] })),
    ).toBe(false);
  });

  it('recognises duplicate key errors by code 11000 only', () => {
    expect(isDuplicateKeyError(named('MongoServerError', { code: 11000 }))).toBe(true);
    expect(isDuplicateKeyError(named('MongoServerError', { code: 11001 }))).toBe(false);
    expect(isDuplicateKeyError(null)).toBe(false);
  });

  it("recognises a unique violation by code 11000 or by the embedded database's constraint error", () => {
    expect(isUniqueViolation(named('MongoServerError', { code: 11000 }))).toBe(true);
    expect(
      isUniqueViolation(
        named('MongoServerError', { code: 1, message: 'UNIQUE constraint failed: x' }),
      ),
    ).toBe(true);
    expect(isUniqueViolation(named('MongoServerError', { code: 1, message: 'other' }))).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});

describe('server error classifiers', () => {
  const server = (fields: Record<string, unknown>) =>
    Object.assign(new Error('x'), { name: 'MongoServerError' }, fields);

  it('recognises NamespaceNotFound by code or by name', () => {
    expect(isNamespaceNotFound(server({ code: 26 }))).toBe(true);
    expect(isNamespaceNotFound(server({ codeName: 'NamespaceNotFound' }))).toBe(true);
    expect(isNamespaceNotFound(server({ code: 27 }))).toBe(false);
    expect(isNamespaceNotFound(null)).toBe(false);
  });

  it('recognises both index conflicts (85, 86) and nothing else', () => {
    expect(isIndexConflict(server({ code: 85 }))).toBe(true);
    expect(isIndexConflict(server({ code: 86 }))).toBe(true);
    expect(isIndexConflict(server({ code: 11000 }))).toBe(false);
    expect(isIndexConflict(undefined)).toBe(false);
  });

  it('recognises NotImplemented by code or by name', () => {
    expect(isNotImplemented(server({ code: 238 }))).toBe(true);
    expect(isNotImplemented(server({ codeName: 'NotImplemented' }))).toBe(true);
    expect(isNotImplemented(server({ code: 2 }))).toBe(false);
  });
});
