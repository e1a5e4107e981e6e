// `npm start` and `npm run start:dev`: the built service on a development database. The service
// (dist/main.js) is booted in this process with a database starter: it validates its
// configuration, has the database resolved here (MONGODB_URI, else mongodb-memory-server, else
// FerretDB), prints its banner, and on SIGTERM/SIGINT closes the app before stopping the database.
//
// Arguments, as `nest start --exec` passes them: [--enable-source-maps] [entry file]
import { DatabaseUnavailableError, resolveDatabase } from './database-resolver';
import { loadBuiltMain } from './service';

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
  const { bootstrap } = await loadBuiltMain(entryFile(process.argv.slice(2)));
  await bootstrap((settings, log) => resolveDatabase({ ...settings, log }));
}

start().catch((error: unknown) => {
  // The unavailable-database message says what to set; anything else needs its stack.
  process.stderr.write(
    `${error instanceof DatabaseUnavailableError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
