import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { DevDatabaseSettingsError, readDevDatabaseSettings } from './settings';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    readDevDatabaseSettings(env);
  } catch (error) {
    if (error instanceof DevDatabaseSettingsError) return error.problems;
    throw error;
  }
  throw new Error('expected a DevDatabaseSettingsError');
}

describe('readDevDatabaseSettings', () => {
  it('gives the documented defaults', () => {
    expect(readDevDatabaseSettings({})).toEqual({
      dataDir: resolve('.data'),
      cacheDir: join(homedir(), '.cache', 'profile-data-service'),
      embedded: 'auto',
      ferretdbVersion: 'v1.24.2',
      ferretdbBin: undefined,
    });
  });

  it('reads its variables and treats empty strings as unset', () => {
    expect(
      readDevDatabaseSettings({
        EMBEDDED_DB: 'ferretdb',
        DATA_DIR: '/tmp/pds-data',
        FERRETDB_BIN: '/opt/ferretdb',
        FERRETDB_VERSION: '',
        CACHE_DIR: '',
        XDG_CACHE_HOME: '/tmp/xdg',
      }),
    ).toEqual({
      dataDir: '/tmp/pds-data',
      cacheDir: '/tmp/xdg/profile-data-service',
      embedded: 'ferretdb',
      ferretdbVersion: 'v1.24.2',
      ferretdbBin: '/opt/ferretdb',
    });
    expect(readDevDatabaseSettings({ CACHE_DIR: '/tmp/cache' }).cacheDir).toBe('/tmp/cache');
  });

  it('lists every problem at once', () => {
    expect(problemsOf({ EMBEDDED_DB: 'mongod', FERRETDB_VERSION: '2.0.0' })).toEqual([
      expect.stringContaining('EMBEDDED_DB'),
      'FERRETDB_VERSION must look like v1.24.2',
    ]);
    expect(() => readDevDatabaseSettings({ EMBEDDED_DB: 'mongod' })).toThrow(
      /^Invalid development database settings:\n {2}- EMBEDDED_DB/,
    );
  });

  it('ignores the service variables', () => {
    expect(() =>
      readDevDatabaseSettings({ NODE_ENV: 'production', PORT: 'abc', MONGODB_URI: 'http://x' }),
    ).not.toThrow();
  });
});
