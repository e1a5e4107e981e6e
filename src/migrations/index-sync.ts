import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { APP_CONFIG, type AppConfig } from '../config';

/**
 * Creates the missing indexes of every model of the service's own collections (never drops
 * one: removing an index is a migration's decision). Idempotent, so every instance may run it.
 */
export async function syncIndexes(connection: Connection): Promise<string[]> {
  const synced: string[] = [];
  for (const model of Object.values(connection.models)) {
    await model.createIndexes();
    synced.push(model.collection.collectionName);
  }
  return synced;
}

/** In production, where mongoose builds no index implicitly, syncs them at start (SYNC_INDEXES). */
@Injectable()
export class IndexSync implements OnApplicationBootstrap {
  private readonly logger = new Logger('IndexSync');

  constructor(
    @InjectConnection() private readonly connection: Connection,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.nodeEnv !== 'production' || !this.config.syncIndexes) return;
    const synced = await syncIndexes(this.connection);
    this.logger.log({ collections: synced.length }, 'indexes in sync');
  }
}
