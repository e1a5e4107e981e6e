// Bulk data for the benchmark, written straight into the database with the native driver (the
// API would take minutes for 100,000 documents). To be sure the documents are exactly what the
// service writes, one sample is created through the API first and every bulk document is a copy
// of its stored shape with the varying fields replaced.
import { join } from 'node:path';
import { ObjectId, type Collection, type Db } from 'mongodb';
import { call, expectStatus, routeMissing } from './api';
import { SERVICE_DIST } from './paths';

/** A stored document: the service keeps some ids as strings, others as ObjectIds. */
interface Doc {
  _id?: string | ObjectId;
  [key: string]: unknown;
}

export interface SeedContext {
  /** The service's main database (the registry, projects). */
  db: Db;
  serviceUrl: string;
  rootKey: string;
}

const BATCH = 5_000;
// Seeded ids are built from a fixed past timestamp plus the index, so they are known without a
// query (id(i)), sort in index order, and sort before every id the server generates later.
const PROJECT_EPOCH_SEC = 1_700_000_000;
const ITEM_EPOCH_SEC = 1_700_000_100;
const PROJECT_EPOCH_MS = PROJECT_EPOCH_SEC * 1000;
export const PAYLOAD =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.';

function seededId(epochSec: number, index: number): string {
  return epochSec.toString(16).padStart(8, '0') + index.toString(16).padStart(16, '0');
}

/** The same value in the representation (ObjectId or hex string) the service used for `like`. */
function idLike(like: unknown, hex: string): ObjectId | string {
  return like instanceof ObjectId ? new ObjectId(hex) : hex;
}

function dateLike(like: unknown, date: Date): Date | string {
  return like instanceof Date ? date : date.toISOString();
}

async function insertInBatches(
  collection: Collection<Doc>,
  count: number,
  from: number,
  build: (i: number) => Doc,
): Promise<void> {
  for (let start = from; start < count; start += BATCH) {
    const docs: Doc[] = [];
    for (let i = start; i < Math.min(count, start + BATCH); i++) docs.push(build(i));
    await collection.insertMany(docs, { ordered: false });
  }
}

/** Finds a document the API just created, in whichever collection the module keeps it. */
async function findStored(
  db: Db,
  id: string,
): Promise<{ collection: string; doc: Doc } | undefined> {
  const ids = ObjectId.isValid(id) && id.length === 24 ? [id, new ObjectId(id)] : [id];
  const names = (await db.listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    .filter((name) => !name.startsWith('system.'));
  for (const name of names) {
    const doc: Doc | null = await db.collection<Doc>(name).findOne({ _id: { $in: ids } });
    if (doc) return { collection: name, doc };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Projects

export interface SeededProjects {
  collection: string;
  builtWith: string;
  count: number;
  id: (i: number) => string;
  createdAt: (i: number) => string;
}

/** src/project/project.repository.ts, as far as the seeding uses it. */
interface ProjectRepositoryModule {
  newProjectDocument?: (
    owner: { userId: string; teamId: string },
    branch: string,
    fields: { name: string; tags: string[] },
    now: Date,
  ) => Doc;
}

const projectId = (i: number): string => seededId(PROJECT_EPOCH_SEC, i);
// One second apart, so the createdAt order is the index order and no two share a value.
const projectCreatedAt = (i: number): Date => new Date(PROJECT_EPOCH_MS + i * 1000);

/**
 * The project module's own document builder (`newProjectDocument`, exported for seeding), when
 * the build has it. Used only if what it builds has exactly the fields of the stored sample;
 * otherwise the copy of the sample is used.
 */
async function projectBuilder(
  sample: Doc,
  copy: (i: number) => Doc,
): Promise<((i: number) => Doc) | undefined> {
  let newProjectDocument: ProjectRepositoryModule['newProjectDocument'];
  try {
    ({ newProjectDocument } = (await import(
      join(SERVICE_DIST, 'project', 'project.repository')
    )) as ProjectRepositoryModule);
  } catch {
    return undefined;
  }
  const { userId, teamId, branch } = sample;
  if (
    typeof newProjectDocument !== 'function' ||
    typeof userId !== 'string' ||
    typeof teamId !== 'string' ||
    typeof branch !== 'string'
  ) {
    return undefined;
  }
  const builder = newProjectDocument;
  const build = (i: number): Doc => {
    const fields = { name: `project-${i}`, tags: ['bench', `t${i % 10}`] };
    const doc = builder({ userId, teamId }, branch, fields, projectCreatedAt(i));
    return { ...doc, _id: idLike(sample._id, projectId(i)) };
  };
  const keys = (doc: Doc): string => Object.keys(doc).sort().join(',');
  return keys(build(0)) === keys(copy(0)) ? build : undefined;
}

/**
 * `count` projects of the bench user, cloned from one created through POST /project (which is
 * then deleted, so the collection holds exactly the seeded ones). Returns undefined when the
 * service has no project routes.
 */
export async function seedProjects(
  { db, serviceUrl, rootKey }: SeedContext,
  count: number,
): Promise<SeededProjects | undefined> {
  const created = await call(serviceUrl, 'POST', '/project', {
    key: rootKey,
    body: { name: 'bench-sample', tags: ['bench'] },
  });
  if (routeMissing(created)) return undefined;
  const sampleId = expectStatus<{ id: string }>(created, 200, 'POST /project').id;
  const stored = await findStored(db, sampleId);
  if (!stored) throw new Error(`project ${sampleId} was created but is in no collection`);
  const sample = stored.doc;

  const copy = (i: number): Doc => {
    const id = projectId(i);
    const at = projectCreatedAt(i);
    const doc: Doc = {};
    for (const [key, value] of Object.entries(sample)) {
      if (key === '_id') doc[key] = idLike(value, id);
      else if (value === sampleId)
        doc[key] = id; // an id kept in a second field as well
      else if (key === 'name') doc[key] = `project-${i}`;
      else if (key === 'tags') doc[key] = ['bench', `t${i % 10}`];
      else if (key === 'createdAt' || key === 'updatedAt') doc[key] = dateLike(value, at);
      else doc[key] = value;
    }
    return doc;
  };

  const fromModule = await projectBuilder(sample, copy);
  const build = fromModule ?? copy;

  const removed = await call(serviceUrl, 'DELETE', `/project/${sampleId}`, { key: rootKey });
  if (removed.status !== 204)
    await db.collection<Doc>(stored.collection).deleteOne({ _id: sample._id });
  await insertInBatches(db.collection<Doc>(stored.collection), count, 0, build);
  return {
    collection: stored.collection,
    builtWith: fromModule ? 'newProjectDocument' : 'copies of the API-created sample',
    count,
    id: projectId,
    createdAt: (i) => projectCreatedAt(i).toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Data items

export interface Items {
  /** The tenant's collection name in the API. */
  name: string;
  /** The native collection behind it, and the database that holds it (the tenant's). */
  physical: string;
  db: Db;
  via: string;
  /** The stored document of the API-created sample item. */
  sample: Doc;
  bodyFields: string[];
  /** Seeded items so far. */
  size: number;
}

/** What the baseline needs to write items the way the service does (BASELINE_COLLECTIONS). */
export interface ItemTemplate {
  physical: string;
  /** The database that holds it (the tenant's). */
  database: string;
  idType: 'objectId' | 'string';
  ownerField: string;
  constants: Doc;
}

export const itemId = (i: number): string => seededId(ITEM_EPOCH_SEC, i);
const ITEM_EPOCH_MS = ITEM_EPOCH_SEC * 1000;
/** Item i's _createdAt and _updatedAt: 10 ms apart, in index order like the ids. */
export const itemCreatedAt = (i: number): Date => new Date(ITEM_EPOCH_MS + i * 10);
const REVISION_EPOCH_SEC = 1_700_000_200;

/** The client-visible fields of item i; `group` has 10 values, each on a tenth of the items. */
export function itemBody(i: number): Doc {
  return {
    sku: `sku-${i}`,
    group: `g${i % 10}`,
    n: i,
    status: i % 2 ? 'closed' : 'open',
    payload: PAYLOAD,
  };
}

/**
 * The physical collection behind the tenant's collection `name`. The data module keeps a
 * registry collection `data_collections` mapping (tenant, branch, name) to the physical name;
 * the exact field names are that module's, so this takes the registry entries that mention
 * `name` and the first of their string values that names a collection holding the sample item.
 * If the registry cannot be read that way, every collection is searched for the sample.
 */
async function findPhysicalCollection(
  db: Db,
  name: string,
  sampleId: { $in: (string | ObjectId)[] },
): Promise<{ physical: string; via: string; db: Db } | undefined> {
  const names = async (holder: Db): Promise<Set<string>> =>
    new Set((await holder.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  const holdsSample = async (holder: Db, existing: Set<string>, physical: string) =>
    existing.has(physical) &&
    (await holder.collection<Doc>(physical).countDocuments({ _id: sampleId })) > 0;
  const existing = await names(db);
  if (existing.has('data_collections')) {
    const entries: Doc[] = await db
      .collection<Doc>('data_collections')
      .find({})
      .limit(1000)
      .toArray();
    for (const entry of entries.filter((e) => Object.values(e).includes(name))) {
      // An entry that names a database (the tenant's) has its native collection there.
      const holder = typeof entry.database === 'string' ? db.client.db(entry.database) : db;
      const inHolder = holder === db ? existing : await names(holder);
      for (const value of Object.values(entry)) {
        if (
          typeof value === 'string' &&
          value !== name &&
          (await holdsSample(holder, inHolder, value))
        ) {
          return { physical: value, via: 'registry data_collections', db: holder };
        }
      }
    }
  }
  for (const physical of existing) {
    if (await holdsSample(db, existing, physical))
      return { physical, via: 'search for the sample item', db };
  }
  return undefined;
}

/**
 * Creates the collection `name` through the API (one item, then the indexes the scenarios use:
 * a unique one on `sku` and one on `group`) and learns the stored shape of an item. Returns
 * undefined when the service has no data routes.
 */
export async function setupItems(
  { db, serviceUrl, rootKey }: SeedContext,
  name: string,
): Promise<Items | undefined> {
  const sampleBody = { ...itemBody(0), sku: 'sku-sample', n: -1 };
  const created = await call(serviceUrl, 'POST', `/data/${name}`, {
    key: rootKey,
    body: { item: sampleBody },
  });
  if (routeMissing(created)) return undefined;
  const sampleId = expectStatus<{ _id: string }>(created, 200, `POST /data/${name}`)._id;
  for (const index of [{ field: 'sku', unique: true }, { field: 'group' }]) {
    const res = await call(serviceUrl, 'POST', `/data/${name}/index`, {
      key: rootKey,
      body: index,
    });
    expectStatus(res, 200, `POST /data/${name}/index ${JSON.stringify(index)}`);
  }

  const ids = ObjectId.isValid(sampleId) ? [sampleId, new ObjectId(sampleId)] : [sampleId];
  const found = await findPhysicalCollection(db, name, { $in: ids });
  if (!found) throw new Error(`item ${sampleId} was created but is in no collection`);
  const sample: Doc | null = await found.db
    .collection<Doc>(found.physical)
    .findOne({ _id: { $in: ids } });
  if (!sample) throw new Error(`item ${sampleId} disappeared from ${found.physical}`);
  return {
    name,
    physical: found.physical,
    db: found.db,
    via: found.via,
    sample,
    bodyFields: Object.keys(sampleBody),
    size: 0,
  };
}

/**
 * Stand-in for a service without data routes: the same documents, in a collection of the
 * harness's own, so that the baseline and the load machinery can still be exercised.
 */
export async function setupStandInItems(
  { db }: SeedContext,
  name: string,
  subject: string,
): Promise<Items> {
  const physical = `${name}_standin`;
  const collection = db.collection<Doc>(physical);
  await collection.createIndex({ sku: 1 }, { unique: true });
  await collection.createIndex({ group: 1 });
  const now = new Date();
  const sample = { _id: '', ...itemBody(0), userId: subject, _createdAt: now, _updatedAt: now };
  return {
    name,
    physical,
    db,
    via: 'stand-in (no data routes)',
    sample,
    bodyFields: Object.keys(itemBody(0)),
    size: 0,
  };
}

export function itemTemplate(items: Items): ItemTemplate {
  const constants: Doc = {};
  for (const [key, value] of Object.entries(items.sample)) {
    if (!['_id', '_createdAt', '_updatedAt', ...items.bodyFields].includes(key))
      constants[key] = value;
  }
  return {
    physical: items.physical,
    database: items.db.databaseName,
    idType: items.sample._id instanceof ObjectId ? 'objectId' : 'string',
    ownerField: 'userId',
    constants,
  };
}

/**
 * The data module's revision record `{c, n}` (src/data/item-revision.ts): `c` is made once per
 * item and is the identity part of its ETag, so a copy gets its own instead of the sample's.
 */
const REVISION_FIELD = '_revision';

function revisionLike(sample: unknown, i: number): unknown {
  if (typeof sample !== 'object' || sample === null || !('c' in sample)) return sample;
  return { ...sample, c: seededId(REVISION_EPOCH_SEC, i) };
}

/**
 * Grows the items collection to `size` documents (ids itemId(items.size) … itemId(size - 1)).
 * Each document is the sample item's stored document with _id, the body fields, the two
 * timestamps and the revision identity replaced; everything else the service stored (the stamped owner field, any
 * internal field) is copied as it is.
 */
export async function seedItems(_ctx: SeedContext, items: Items, size: number): Promise<void> {
  const { sample } = items;
  const build = (i: number): Doc => {
    const body = itemBody(i);
    const at = itemCreatedAt(i);
    const doc: Doc = {};
    for (const [key, value] of Object.entries(sample)) {
      if (key === '_id') doc[key] = idLike(value, itemId(i));
      else if (key === '_createdAt' || key === '_updatedAt') doc[key] = dateLike(value, at);
      else if (key === REVISION_FIELD) doc[key] = revisionLike(value, i);
      else if (key in body) doc[key] = body[key];
      else doc[key] = value;
    }
    return doc;
  };
  await insertInBatches(items.db.collection<Doc>(items.physical), size, items.size, build);
  items.size = size;
}
