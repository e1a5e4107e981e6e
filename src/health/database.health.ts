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

  async ping(key: string): Promise<HealthIndicatorResult> {
    const check = this.indicator.check(key);
    const db = this.connection.db;
    if (!db) return check.down('not connected');
    try {
      await db.command({ ping: 1 }, { timeoutMS: this.config.database.serverSelectionTimeoutMs });
      return check.up();
    } catch {
      return check.down('ping failed');
    }
  }
}
