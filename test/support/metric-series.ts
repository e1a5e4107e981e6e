import type { INestApplication } from '@nestjs/common';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { ServiceMetrics } from '../../src/metrics';

/**
 * The e2e suite as one long-lived process would see it: every app a test file closes appends the
 * series it exposes, and global-teardown counts them all together. The union is what a single
 * instance would expose after serving every request of the suite; it must stay under
 * MAX_SERIES (labels are route templates, never raw paths). The bound grows with the API: a
 * route template answered with a status costs about a dozen series (a latency histogram), so the
 * ~150 operations (60 route templates) with the statuses the suite provokes came to 3,066 series
 * once files and the console's reads and pages were added, while one raw path in a label would
 * add a dozen series per distinct collection, item and key the suite uses — many thousands.
 */
export const MAX_SERIES = 4000;

/** The series names with their labels, without the sample values. */
function seriesOf(exposition: string): string[] {
  return exposition
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.slice(0, line.lastIndexOf(' ')));
}

export async function recordMetricSeries(app: INestApplication): Promise<void> {
  const log = process.env.TEST_METRIC_SERIES_LOG;
  if (!log) return;
  let metrics: ServiceMetrics;
  try {
    metrics = app.get(ServiceMetrics, { strict: false });
  } catch {
    return; // an app started with METRICS_ENABLED=false has none
  }
  appendFileSync(log, `${seriesOf(await metrics.scrape()).join('\n')}\n`);
}

/** Called by global-teardown: the distinct series of the whole run. */
export function countRecordedSeries(): number | undefined {
  const log = process.env.TEST_METRIC_SERIES_LOG;
  if (!log || !existsSync(log)) return undefined;
  return new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean)).size;
}
