import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BSON, MongoClient, type Document } from 'mongodb';
import { testDatabaseUri } from './app';

/** What a recorded database holds: every collection with its documents and indexes. */
export type RecordedCollections = Record<
  string,
  {
    documents: Document[];
    indexes: { name: string; key: Record<string, 1 | -1>; unique: boolean }[];
  }
>;

/** A fixture of test/fixtures, read as Extended JSON. */
export function readFixture<T extends { collections: RecordedCollections }>(file: string): T {
  return BSON.EJSON.parse(readFileSync(join(__dirname, '..', 'fixtures', file), 'utf8')) as T;
}

/** Writes recorded collections into `dbName` on the run's database server. */
export async function restoreCollections(
  dbName: string,
  collections: RecordedCollections,
): Promise<void> {
  const client = await MongoClient.connect(testDatabaseUri());
  try {
    const db = client.db(dbName);
    for (const [name, { documents, indexes }] of Object.entries(collections)) {
      await db.createCollection(name);
      if (documents.length > 0) await db.collection(name).insertMany(documents);
      for (const index of indexes) {
        await db
          .collection(name)
          .createIndex(index.key, { name: index.name, ...(index.unique ? { unique: true } : {}) });
      }
    }
  } finally {
    await client.close();
  }
}
