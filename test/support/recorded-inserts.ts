import { MongoClient, type CommandStartedEvent, type Collection, type Document } from 'mongodb';
import { testDatabaseUri, uniqueDbName } from './app';

/** A test file's database, reached through a client that records the insert commands it sends. */
export interface RecordedInserts {
  dbName: string;
  /** A collection of its own in the file's database (`prepare` runs before the record starts). */
  collection<T extends Document>(
    prepare?: (collection: Collection<T>) => Promise<unknown>,
  ): Promise<Collection<T>>;
  /** The inserts sent since the last `collection()` or `clear()`. */
  inserts: CommandStartedEvent[];
  /** How many documents each of those inserts carried. */
  documentsPerInsert(): number[];
  clear(): void;
}

/**
 * For tests of how writes go into commands: a database of the file's own and a client that
 * records its inserts. Connects before the file's tests; drops the database and closes after.
 */
export function recordedInserts(testFile: string): RecordedInserts {
  const dbName = uniqueDbName(testFile);
  const client = new MongoClient(testDatabaseUri(), { monitorCommands: true });
  const inserts: CommandStartedEvent[] = [];
  client.on('commandStarted', (event) => {
    if (event.commandName === 'insert') inserts.push(event);
  });
  beforeAll(() => client.connect());
  afterAll(async () => {
    await client.db(dbName).dropDatabase();
    await client.close();
  });
  let n = 0;
  const clear = () => {
    inserts.length = 0;
  };
  return {
    dbName,
    async collection<T extends Document>(
      prepare?: (collection: Collection<T>) => Promise<unknown>,
    ) {
      n += 1;
      const collection = client.db(dbName).collection<T>(`c${n}`);
      await prepare?.(collection);
      clear();
      return collection;
    },
    inserts,
    documentsPerInsert: () => inserts.map((event) => (event.command.documents as unknown[]).length),
    clear,
  };
}
