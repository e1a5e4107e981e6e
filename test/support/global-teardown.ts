import { existsSync, readFileSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  await globalThis.__TEST_DATABASE__?.stop();
  reportNotRun();
}

/** Prints the MongoDB-only guarantees this run did not assert (see database-server.ts). */
function reportNotRun(): void {
  const log = process.env.TEST_NOT_RUN_LOG;
  if (!log || !existsSync(log)) return;
  const lines = [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
  if (lines.length === 0) return;
  process.stdout.write(
    `\nNot asserted on ${process.env.TEST_DATABASE_SERVER} (these guarantees need MongoDB):\n` +
      lines.map((line) => `  - ${line}\n`).join(''),
  );
}
