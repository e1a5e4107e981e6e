// `npm start` and `npm run start:dev`: the built service on a development database. This tool
// reads its own settings (DATA_DIR, CACHE_DIR, EMBEDDED_DB, FERRETDB_*; from `.env` too, as the
// service does), then boots the service (dist/main.js) in this process with a database starter:
// the service validates its configuration, has the database resolved here (its MONGODB_URI, else
// mongodb-memory-server, else FerretDB), prints its banner, and on SIGTERM/SIGINT closes the app
// before stopping the database.
//
// Arguments, as `nest start --exec` passes them: [--enable-source-maps] [entry file]
import { DatabaseUnavailableError, resolveDatabase } from './database-resolver';
import { loadBuiltMain } from './service';
import { DevDatabaseSettingsError, loadDotEnvFile, readDevDatabaseSettings } from './settings';

function entryFile(args: string[]): string | undefined {
  let entry: string | undefined;
  for (const arg of args) {
    if (arg === '--enable-source-maps') process.setSourceMapsEnabled(true);
    else if (!arg.startsWith('-') && entry === undefined) entry = arg;
    else {
      process.stderr.write(
        `unexpected argument ${arg}; usage: start.js [--enable-source-maps] [entry]\n`,
      );
      process.exit(2);
    }
  }
  return entry;
}

async function start(): Promise<void> {
  const entry = entryFile(process.argv.slice(2));
  loadDotEnvFile();
  const settings = readDevDatabaseSettings();
  const { bootstrap } = await loadBuiltMain(entry);
  await bootstrap((uri, log) => resolveDatabase({ ...settings, uri, log }));
}

start().catch((error: unknown) => {
  // The settings and unavailable-database messages say what to set; anything else needs its stack.
  const said =
    error instanceof DatabaseUnavailableError || error instanceof DevDatabaseSettingsError;
  process.stderr.write(
    `${said ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
