import ConnectionString from 'mongodb-connection-string-url';

/** The database every version before this rule used when MONGODB_URI named another one. */
export const LEGACY_DATABASE_NAME = 'profile_data';

/** MongoDB's own databases: never the service's (authenticate against them with `authSource`). */
const RESERVED = new Set(['admin', 'local', 'config']);

/**
 * Letters, digits, `_` and `-`, at most 38 characters: within what both MongoDB (no `/\. "$*<>:|?`,
 * under 64 bytes) and FerretDB (63 characters of `[A-Za-z0-9_-]`) accept, with room for the
 * suffixes the tests add.
 */
const NAME = /^[A-Za-z0-9_-]{1,38}$/;

export interface DatabaseName {
  name: string;
  /** Where the name came from: the URI's path, MONGODB_DB_NAME, or the default. */
  source: 'uri' | 'MONGODB_DB_NAME' | 'default';
}

/** The database a MongoDB URI names in its path (its default database), if any. */
export function uriDatabase(uri: string): string | undefined {
  let path: string;
  try {
    path = new ConnectionString(uri).pathname;
  } catch {
    // MONGODB_URI's own validation reports a malformed URI.
    return undefined;
  }
  const name = decodeURIComponent(path.replace(/^\//, ''));
  return name === '' ? undefined : name;
}

/**
 * Which database the service uses: the one MONGODB_URI names (as every MongoDB driver and tool
 * reads the URI), else MONGODB_DB_NAME, else `profile_data`. Both set and different is a
 * configuration error, so that two deployments differing only in the URI's database can never
 * share one silently. Returns the name or the problems to report.
 */
export function resolveDatabaseName(
  uri: string | undefined,
  dbNameVariable: string | undefined,
): DatabaseName | { problems: string[] } {
  const fromUri = uri === undefined ? undefined : uriDatabase(uri);
  if (fromUri !== undefined && dbNameVariable !== undefined && fromUri !== dbNameVariable) {
    return {
      problems: [
        `MONGODB_URI names the database "${fromUri}" but MONGODB_DB_NAME is "${dbNameVariable}": ` +
          "unset MONGODB_DB_NAME to use the URI's, or change the URI's path to \"/" +
          `${dbNameVariable}"`,
      ],
    };
  }
  const chosen: DatabaseName =
    fromUri !== undefined
      ? { name: fromUri, source: 'uri' }
      : dbNameVariable !== undefined
        ? { name: dbNameVariable, source: 'MONGODB_DB_NAME' }
        : { name: LEGACY_DATABASE_NAME, source: 'default' };
  const setting = chosen.source === 'uri' ? "MONGODB_URI's path" : 'MONGODB_DB_NAME';
  if (RESERVED.has(chosen.name)) {
    return {
      problems: [
        `${setting} names "${chosen.name}", one of MongoDB's own databases (admin, local, config): ` +
          'name the service\'s database instead, and authenticate against admin with "?authSource=admin"',
      ],
    };
  }
  if (!NAME.test(chosen.name)) {
    return {
      problems: [`${setting} must name a database of 1-38 letters, digits, _ or -`],
    };
  }
  return chosen;
}
