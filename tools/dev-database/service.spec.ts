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

  it('reads the development database settings through the service configuration', () => {
    const settings = config.loadConfig({
      NODE_ENV: 'test',
      EMBEDDED_DB: 'ferretdb',
      DATA_DIR: '/tmp/pds-data',
      FERRETDB_BIN: '/opt/ferretdb',
    }).database;

    expect(settings).toMatchObject({
      embedded: 'ferretdb',
      dataDir: '/tmp/pds-data',
      ferretdbBin: '/opt/ferretdb',
      ferretdbVersion: 'v1.24.2',
    });
    expect(settings.uri).toBeUndefined();
  });
});
