import {
  Global,
  Inject,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { MongoClient, type MongoClientOptions } from 'mongodb';
import { createConnection, type Connection } from 'mongoose';
import { checkPoolsEvery } from './common/mongo/pool-checks';

export interface MainConnectionOptions {
  uri: string;
  /** The driver's settings, the database's name among them. */
  driver: MongoClientOptions & { dbName: string };
  /** Mongoose builds a model's indexes as the model loads (not in production: see AppModule). */
  autoIndex: boolean;
  /** Called with the client before it connects (the database metrics watch it from there). */
  watch?: (client: MongoClient) => void;
  /** Attempts at the first connect, and the wait between two. */
  attempts: number;
  retryDelayMs: number;
}

/**
 * The main database connection that every `MongooseModule.forFeature` model and
 * `@InjectConnection()` use, under NestJS's token for it. It is built here rather than by
 * `MongooseModule.forRoot`, which creates and connects its client in one step: this module
 * creates the client, sets what the driver takes only before a connect (its pools' check
 * interval: common/mongo/pool-checks.ts), connects it, and hands it to a mongoose connection
 * (`Connection#setClient`). Operations fail at once while disconnected (no buffering): a request
 * gets its 503 within the server-selection timeout instead of waiting in a queue.
 */
@Global()
@Module({})
export class MainConnectionModule implements OnApplicationShutdown {
  constructor(@Inject(getConnectionToken()) private readonly connection: Connection) {}

  static forRoot(options: MainConnectionOptions): DynamicModule {
    const provider = { provide: getConnectionToken(), useFactory: () => openMain(options) };
    return { module: MainConnectionModule, providers: [provider], exports: [provider] };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.connection.close();
  }
}

async function openMain(options: MainConnectionOptions): Promise<Connection> {
  const logger = new Logger('MainConnection');
  for (let attempt = 1; ; attempt += 1) {
    const client = checkPoolsEvery(new MongoClient(options.uri, options.driver));
    options.watch?.(client);
    try {
      await client.connect();
    } catch (error) {
      await client.close().catch(() => undefined);
      if (attempt >= options.attempts) throw error;
      logger.warn({ err: error, attempt }, 'cannot connect to the database; trying again');
      await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs));
      continue;
    }
    const connection = createConnection();
    // Mongoose's own settings of a connection (those `openUri` takes from its options).
    const config = connection.config as { bufferCommands?: boolean; autoIndex?: boolean };
    config.bufferCommands = false;
    config.autoIndex = options.autoIndex;
    return connection.setClient(client);
  }
}
