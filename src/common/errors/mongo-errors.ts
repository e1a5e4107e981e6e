/**
 * Classifies driver errors without importing driver classes (mongoose and the native driver may
 * be different copies): by `name` and server `code`.
 */
const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  'PoolClearedOnNetworkError',
  'MongoOperationTimeoutError',
  'MongooseServerSelectionError',
]);

/** Server codes meaning "too slow" or "not reachable right now" rather than a bad request. */
const UNAVAILABLE_CODES = new Set([
  50, // MaxTimeMSExpired
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
]);

interface MaybeMongoError {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  writeErrors?: unknown;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as MaybeMongoError;
  if (typeof e.name === 'string' && UNAVAILABLE_NAMES.has(e.name)) return true;
  if (typeof e.code === 'number' && UNAVAILABLE_CODES.has(e.code)) return true;
  // A bulk write (insertMany) that could not reach the server throws a MongoBulkWriteError
  // without write errors, with the driver error's own properties copied onto it: a network
  // error's `beforeHandshake`, a server selection error's `reason`.
  if (
    e.name === 'MongoBulkWriteError' &&
    !(Array.isArray(e.writeErrors) && e.writeErrors.length > 0) &&
    ('beforeHandshake' in e || 'reason' in e)
  )
    return true;
  // mongoose refuses operations before the first connection with a plain MongooseError.
  return (
    e.name === 'MongooseError' &&
    typeof e.message === 'string' &&
    /buffering timed out|before initial connection|Connection was force closed/i.test(e.message)
  );
}

/** Server code of a write that a unique index refused. */
const DUPLICATE_KEY = 11000;

export function isDuplicateKeyError(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as MaybeMongoError).code === DUPLICATE_KEY
  );
}

/**
 * A unique index refused a write. MongoDB always says so with code 11000; FerretDB's SQLite
 * handler (the embedded development database, src/common/mongo/fallback-database.ts) reports
 * violations found during updates and index builds as an internal error (code 1) naming the
 * SQLite constraint.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (isDuplicateKeyError(error)) return true;
  const e = error as MaybeMongoError | null;
  return (
    e?.code === 1 && typeof e.message === 'string' && e.message.includes('UNIQUE constraint failed')
  );
}

interface MaybeNamedCode {
  code?: unknown;
  codeName?: unknown;
}

/** Server codes by name: servers that speak the protocol but not MongoDB's numbers send the name. */
function hasCode(error: unknown, code: number, codeName: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as MaybeNamedCode;
  return e.code === code || e.codeName === codeName;
}

/** NamespaceNotFound (26): the collection does not exist (never created, or dropped). */
export function isNamespaceNotFound(error: unknown): boolean {
  return hasCode(error, 26, 'NamespaceNotFound');
}

/**
 * IndexOptionsConflict (85) or IndexKeySpecsConflict (86): an index with this name or these
 * keys exists with another definition.
 */
export function isIndexConflict(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as MaybeNamedCode).code : null;
  return code === 85 || code === 86;
}

/** NotImplemented (238): the server lacks the operator or stage (FerretDB's $avg, $min, $max). */
export function isNotImplemented(error: unknown): boolean {
  return hasCode(error, 238, 'NotImplemented');
}
