import { BSON, type Db } from 'mongodb';

const { EJSON } = BSON;

/**
 * Every document in the databases that contains `needle` anywhere — a field name, a string value,
 * inside arrays and nested documents (read as Extended JSON) — as `collection/_id`. Binary fields
 * are read as base64, so only what the database shows in the clear is found.
 */
export async function documentsNaming(dbs: Db | Db[], needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const db of [dbs].flat()) {
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      for await (const doc of db.collection(name).find()) {
        if (EJSON.stringify(doc).includes(needle))
          found.push(`${db.databaseName}.${name}/${EJSON.stringify(doc._id)}`);
      }
    }
  }
  return found;
}
