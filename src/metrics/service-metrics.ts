import type { MongoClient } from 'mongodb';
import { Registry } from 'prom-client';
import { DatabaseMetrics } from './database-metrics';
import { HttpMetrics } from './http-metrics';
import { processMetrics } from './process-metrics';
import { TaskMetrics } from './task-metrics';

/**
 * The metrics of one app, in a registry of its own (never prom-client's global one), so that
 * several apps in one process (the e2e tests) keep apart; a scrape adds the process's metrics.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly http = new HttpMetrics(this.registry);
  readonly database = new DatabaseMetrics(this.registry);
  readonly tasks = new TaskMetrics(this.registry);
  private readonly scraped = Registry.merge([processMetrics(), this.registry]);

  /** The Prometheus text exposition format (Registry.PROMETHEUS_CONTENT_TYPE). */
  scrape(): Promise<string> {
    return this.scraped.metrics();
  }
}

/**
 * Options of the main database connection that feed the database metrics: the client's events
 * watched from its creation, before it connects, and the driver's command monitoring only when
 * `databaseCommands` (METRICS_DATABASE_COMMANDS) asks for it — it builds an event per command and
 * decodes a second copy of every reply. Nothing when metrics are off.
 */
export function monitoredConnection(
  metrics: ServiceMetrics | undefined,
  databaseCommands: boolean,
): {
  monitorCommands?: boolean;
  watch?: (client: MongoClient) => void;
} {
  if (!metrics) return {};
  return {
    monitorCommands: databaseCommands,
    watch: (client) => metrics.database.watch(client),
  };
}
