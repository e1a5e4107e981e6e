import type { CommandFailedEvent, CommandSucceededEvent, MongoClient } from 'mongodb';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { BoundedLabel } from './bounded-label';

/** Seconds: from an _id lookup (well under 1 ms on MongoDB) to QUERY_TIMEOUT_MS. */
const COMMAND_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

/**
 * Distinct command names kept as labels. The service sends about twenty (find, insert, update,
 * delete, aggregate, count, getMore, createIndexes, …); the cap only guards against surprises.
 */
const MAX_COMMANDS = 40;

/**
 * Database commands (from the driver's command monitoring) and the connection pool (from its
 * CMAP events). Command durations are the driver's own: from sending the command to its reply.
 * An error is a command that failed (server error, network error, timeout); a write that
 * succeeded with write errors (a duplicate key) is a succeeded command.
 */
export class DatabaseMetrics {
  private readonly commands = new BoundedLabel(MAX_COMMANDS);
  private readonly duration: Histogram<'command'>;
  private readonly errors: Counter<'command'>;
  private readonly sent: Counter;
  private readonly open: Gauge;
  private readonly inUse: Gauge;
  private readonly waiting: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({
      name: 'mongodb_command_duration_seconds',
      help: 'MongoDB commands by command name, from sending to reply (failed ones included)',
      labelNames: ['command'],
      buckets: COMMAND_BUCKETS,
      registers,
    });
    this.errors = new Counter({
      name: 'mongodb_command_errors_total',
      help: 'MongoDB commands that failed, by command name',
      labelNames: ['command'],
      registers,
    });
    this.sent = new Counter({
      name: 'mongodb_commands_total',
      help: 'Commands sent to the database (round trips): each checks a connection out of the pool, so they are counted without command monitoring',
      registers,
    });
    this.open = new Gauge({
      name: 'mongodb_pool_connections',
      help: 'Connections open in the driver pool (all servers)',
      registers,
    });
    this.inUse = new Gauge({
      name: 'mongodb_pool_connections_in_use',
      help: 'Connections checked out of the pool by an operation',
      registers,
    });
    this.waiting = new Gauge({
      name: 'mongodb_pool_waiting',
      help: 'Operations waiting for a connection from the pool',
      registers,
    });
  }

  /**
   * Listens to the client's events. Called as the connection is created, before it connects,
   * so that every pool event is seen and the gauges start from zero. Command events need the
   * client option `monitorCommands: true`; commandStarted is not needed, for the succeeded and
   * failed events carry the duration.
   */
  watch(client: MongoClient): void {
    client.on('commandSucceeded', (event: CommandSucceededEvent) => {
      this.duration.observe(
        { command: this.commands.of(event.commandName) },
        event.duration / 1000,
      );
    });
    client.on('commandFailed', (event: CommandFailedEvent) => {
      const command = this.commands.of(event.commandName);
      this.duration.observe({ command }, event.duration / 1000);
      this.errors.inc({ command });
    });
    client.on('connectionCreated', () => this.open.inc());
    client.on('connectionClosed', () => this.open.dec());
    client.on('connectionCheckOutStarted', () => {
      this.sent.inc();
      this.waiting.inc();
    });
    client.on('connectionCheckOutFailed', () => this.waiting.dec());
    client.on('connectionCheckedOut', () => {
      this.waiting.dec();
      this.inUse.inc();
    });
    client.on('connectionCheckedIn', () => this.inUse.dec());
  }
}
