import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseUnavailableError, resolveDatabase } from './database-resolver';
import { loadDatabaseSettings } from './service';
import { DevDatabaseSettingsError } from './settings';

/**
 * `node dist-dev/tools/dev-database/prepare.js`: resolves the database once, as `npm start` and
 * the tests will (building FerretDB on first use), then stops it. CI runs it so a first-time
 * build is a step of its own rather than part of the test timings.
 */
async function prepare(): Promise<void> {
  const settings = await loadDatabaseSettings();
  const dataDir = mkdtempSync(join(tmpdir(), 'pds-prepare-'));
  try {
    const database = await resolveDatabase({
      ...settings,
      dataDir,
      log: (message) => process.stdout.write(`${message}\n`),
    });
    process.stdout.write(`database ready: ${database.description}\n`);
    await database.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

prepare().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof DatabaseUnavailableError || error instanceof DevDatabaseSettingsError ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
