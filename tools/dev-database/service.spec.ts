import { loadConfig } from '../../src/config';
import type * as ServiceMain from '../../src/main';
import type { BuiltConfig, BuiltMain } from './service';

// The tool loads dist/ by path, so only this file ties the shapes in service.ts to the sources:
// it stops compiling (in jest, tsc and lint) when src/main.ts or src/config no longer fit them.
const mainFits: typeof ServiceMain extends BuiltMain ? true : false = true;
const config: BuiltConfig = { loadConfig };

describe('the built service as the development tools use it', () => {
  it('boots with a database starter', () => {
    expect(mainFits).toBe(true);
  });

  it('reads MONGODB_URI through the service configuration', () => {
    expect(
      config.loadConfig({ NODE_ENV: 'test', MONGODB_URI: 'mongodb://db.example:27017/' }).database
        .uri,
    ).toBe('mongodb://db.example:27017/');
    expect(config.loadConfig({ NODE_ENV: 'test', MONGODB_URI: '' }).database.uri).toBeUndefined();
  });

  it('leaves the development database settings to the tool', () => {
    const database = config.loadConfig({
      NODE_ENV: 'test',
      EMBEDDED_DB: 'not-a-kind',
      DATA_DIR: '/tmp/pds-data',
    }).database;

    expect(database).not.toHaveProperty('embedded');
    expect(database).not.toHaveProperty('dataDir');
  });
});
