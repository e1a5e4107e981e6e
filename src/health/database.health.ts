import { Inject, Injectable } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { Connection } from 'mongoose';
import { APP_CONFIG, type AppConfig } from '../config';

/**
 * Readiness of the database by a real `ping` round trip. terminus' MongooseHealthIndicator only
 * reads the connection's readyState, which stays "connected" for a while after the server dies.
 */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly indicator: HealthIndicatorService,
    @InjectConnection() private readonly connection: Connection,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Down while the process drains for shutdown, so no new traffic is routed here. */
  draining(key: string, draining: boolean): HealthIndicatorResult {
    const check = this.indicator.check(key);
    return draining ? check.down('shutting down') : check.up();
  }

  async ping(key: string): Promise<HealthIndicatorResult> {
    const check = this.indicator.check(key);
    const db = this.connection.db;
    if (!db) return check.down('not connected');
    try {
      // The client's heartbeat and selection timeouts (app.module.ts) already bound it, a frozen
      // server included; the probe is what orchestrators act on, so it also carries the driver's
      // abort signal as a hard bound. (The installed driver ignores `timeoutMS`.)
      await db.command(
        { ping: 1 },
        { signal: AbortSignal.timeout(this.config.database.serverSelectionTimeoutMs) },
      );
      return check.up();
    } catch {
      return check.down('ping failed');
    }
  }
}
