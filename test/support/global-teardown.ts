import { existsSync, readFileSync } from 'node:fs';
import { removeThrowawayDataDir } from '../../tools/dev-database';
import { countRecordedSeries, MAX_SERIES } from './metric-series';

export default async function globalTeardown(): Promise<void> {
  await globalThis.__TEST_DATABASE__?.stop();
  if (globalThis.__TEST_DATA_DIR__) removeThrowawayDataDir(globalThis.__TEST_DATA_DIR__);
  reportNotRun();
  checkMetricSeries();
}

/** The metrics of every app of the run together stay under MAX_SERIES (see metric-series.ts). */
function checkMetricSeries(): void {
  const series = countRecordedSeries();
  if (series === undefined) return;
  process.stderr.write(
    `\nMetric series exposed after the e2e run: ${series} (limit ${MAX_SERIES})\n`,
  );
  if (series >= MAX_SERIES)
    throw new Error(`the e2e run left ${series} metric series, over the ${MAX_SERIES} bound`);
}

/**
 * Prints what this run did not assert on its server (see database-server.ts), on stderr
 * beside jest's own report, so it shows wherever the results do (CI keeps stdout for --json).
 */
function reportNotRun(): void {
  const log = process.env.TEST_NOT_RUN_LOG;
  if (!log || !existsSync(log)) return;
  const lines = [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
  if (lines.length === 0) return;
  const server = process.env.TEST_DATABASE_SERVER;
  const why = server === 'mongodb' ? "FerretDB's own behaviour" : 'these guarantees need MongoDB';
  process.stderr.write(
    `\nNot asserted on ${server} (${why}):\n` + lines.map((line) => `  - ${line}\n`).join(''),
  );
}
