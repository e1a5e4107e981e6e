import { createTestApp, uniqueDbName, type TestApp } from '../support/app';

/**
 * Production builds no index as a side effect of a model loading: only the explicit sync (at
 * start unless SYNC_INDEXES=false, or `npm run db:sync-indexes`) does.
 */
const dbName = uniqueDbName(__filename);
const production = { NODE_ENV: 'production', MONGODB_DB_NAME: dbName };

async function indexNames(t: TestApp, collection: string): Promise<string[]> {
  const indexes = await t.connection.collection(collection).listIndexes().toArray();
  return indexes.map((i) => String(i.name)).sort();
}

it('builds no index in production with SYNC_INDEXES=false, and every one at a start without it', async () => {
  const unsynced = await createTestApp(__filename, { ...production, SYNC_INDEXES: 'false' });
  try {
    expect(await indexNames(unsynced, 'api_keys')).toEqual(['_id_']);
    expect(await indexNames(unsynced, 'data_collections')).toEqual(['_id_']);
  } finally {
    await unsynced.app.close();
  }
  const synced = await createTestApp(__filename, production);
  try {
    expect(await indexNames(synced, 'api_keys')).toEqual(
      expect.arrayContaining(['_id_', 'digest_1']),
    );
    expect(await indexNames(synced, 'data_collections')).toEqual(
      expect.arrayContaining(['namespace_name', 'namespace_slot']),
    );
  } finally {
    await synced.close();
  }
});
