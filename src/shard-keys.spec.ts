import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Schema } from 'mongoose';
import { RATE_LIMIT_COLLECTION } from './rate-limit/rate-limit-hits';

/**
 * docs/deployment.md names a shard key for every collection of the main database. Each must be
 * the prefix of an index the service declares for that collection (fields in order, same
 * directions), and the list must name every collection the schemas declare.
 */
const SRC = __dirname;
type Key = Record<string, unknown>;

function schemaFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return schemaFiles(path);
    return name.endsWith('.schema.ts') ? [path] : [];
  });
}

/** Every collection's declared index keys, `_id` included, from the schemas of src. */
async function declaredIndexes(): Promise<Map<string, Key[]>> {
  const indexes = new Map<string, Key[]>();
  for (const file of schemaFiles(SRC)) {
    for (const value of Object.values((await import(file)) as Record<string, unknown>)) {
      if (!(value instanceof Schema)) continue;
      const collection: unknown = value.get('collection');
      if (typeof collection !== 'string') continue;
      const keys = value.indexes().map(([key]) => key as Key);
      indexes.set(collection, [{ _id: 1 }, ...(indexes.get(collection) ?? []), ...keys]);
    }
  }
  // The shared rate limit's collection has no schema: the driver writes it, by `_id` alone.
  indexes.set(RATE_LIMIT_COLLECTION, [{ _id: 1 }]);
  return indexes;
}

/** The table between the shard-keys markers of docs/deployment.md: collection → key. */
function documentedKeys(): Map<string, Key> {
  const text = readFileSync(join(SRC, '..', 'docs', 'deployment.md'), 'utf8');
  const table = /<!-- shard-keys -->([\s\S]*?)<!-- \/shard-keys -->/.exec(text)?.[1] ?? '';
  const keys = new Map<string, Key>();
  for (const row of table.split('\n')) {
    const match = /^\| `([a-z_]+)` \|[^|]*\| `(\{[^`]*\})`/.exec(row);
    if (match) keys.set(match[1] as string, JSON.parse(match[2] as string) as Key);
  }
  return keys;
}

function isPrefix(key: Key, index: Key): boolean {
  const indexEntries = Object.entries(index);
  return Object.entries(key).every(
    ([field, direction], i) => indexEntries[i]?.[0] === field && indexEntries[i]?.[1] === direction,
  );
}

describe('shard keys in docs/deployment.md', () => {
  let declared: Map<string, Key[]>;
  const documented = documentedKeys();
  beforeAll(async () => {
    declared = await declaredIndexes();
  });

  it('are named for every collection of the main database', () => {
    expect(declared.size).toBeGreaterThan(15);
    expect([...documented.keys()].sort()).toEqual([...declared.keys()].sort());
  });

  it('are each the prefix of an index of its collection', () => {
    const unserved = [...documented].filter(
      ([collection, key]) =>
        !(declared.get(collection) ?? []).some((index) => isPrefix(key, index)),
    );
    expect(unserved.map(([collection, key]) => `${collection} ${JSON.stringify(key)}`)).toEqual([]);
  });

  it('tells a prefix from a key that is not one', () => {
    expect(isPrefix({ a: 1, b: 1 }, { a: 1, b: 1, c: 1 })).toBe(true);
    expect(isPrefix({ b: 1 }, { a: 1, b: 1 })).toBe(false);
    expect(isPrefix({ a: -1 }, { a: 1 })).toBe(false);
  });
});
