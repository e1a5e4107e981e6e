'use strict';
// Bulk data for the benchmark, written straight into the database with the native driver (the
// API would take minutes for 100,000 documents). To be sure the documents are exactly what the
// service writes, one sample is created through the API first and every bulk document is a copy
// of its stored shape with the varying fields replaced.
const { ObjectId } = require('mongodb');
const { call, expectStatus, routeMissing } = require('./api');

const BATCH = 5_000;
// Seeded ids are built from a fixed past timestamp plus the index, so they are known without a
// query (id(i)), sort in index order, and sort before every id the server generates later.
const PROJECT_EPOCH_SEC = 1_700_000_000;
const ITEM_EPOCH_SEC = 1_700_000_100;
const PROJECT_EPOCH_MS = PROJECT_EPOCH_SEC * 1000;
const PAYLOAD =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.';

function seededId(epochSec, index) {
  return epochSec.toString(16).padStart(8, '0') + index.toString(16).padStart(16, '0');
}

/** The same value in the representation (ObjectId or hex string) the service used for `like`. */
function idLike(like, hex) {
  return like instanceof ObjectId ? new ObjectId(hex) : hex;
}

function dateLike(like, date) {
  return like instanceof Date ? date : date.toISOString();
}

async function insertInBatches(collection, count, from, build) {
  for (let start = from; start < count; start += BATCH) {
    const docs = [];
    for (let i = start; i < Math.min(count, start + BATCH); i++) docs.push(build(i));
    await collection.insertMany(docs, { ordered: false });
  }
}

/** Finds a document the API just created, in whichever collection the module keeps it. */
async function findStored(db, id) {
  const ids = ObjectId.isValid(id) && id.length === 24 ? [id, new ObjectId(id)] : [id];
  const names = (await db.listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    .filter((name) => !name.startsWith('system.'));
  for (const name of names) {
    const doc = await db.collection(name).findOne({ _id: { $in: ids } });
    if (doc) return { collection: name, doc };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Projects

/**
 * The project module's own document builder (`newProjectDocument`, exported for seeding), when
 * the build has it. Used only if what it builds has exactly the fields of the stored sample;
 * otherwise the copy of the sample is used.
 */
function projectBuilder(sample, copy) {
  let newProjectDocument;
  try {
    ({ newProjectDocument } = require('../../dist/project/project.repository'));
  } catch {
    return undefined;
  }
  if (typeof newProjectDocument !== 'function') return undefined;
  const owner = { userId: sample.userId, teamId: sample.teamId };
  const build = (i) => {
    const fields = { name: `project-${i}`, tags: ['bench', `t${i % 10}`] };
    const doc = newProjectDocument(owner, sample.branch, fields, projectCreatedAt(i));
    return { ...doc, _id: idLike(sample._id, projectId(i)) };
  };
  const keys = (doc) => Object.keys(doc).sort().join(',');
  return keys(build(0)) === keys(copy(0)) ? build : undefined;
}

const projectId = (i) => seededId(PROJECT_EPOCH_SEC, i);
// One second apart, so the createdAt order is the index order and no two share a value.
const projectCreatedAt = (i) => new Date(PROJECT_EPOCH_MS + i * 1000);

/**
 * `count` projects of the bench user, cloned from one created through POST /project (which is
 * then deleted, so the collection holds exactly the seeded ones). Returns undefined when the
 * service has no project routes.
 */
async function seedProjects({ db, serviceUrl, rootKey }, count) {
  const created = await call(serviceUrl, 'POST', '/project', {
    key: rootKey,
    body: { name: 'bench-sample', tags: ['bench'] },
  });
  if (routeMissing(created)) return undefined;
  const sampleId = expectStatus(created, 200, 'POST /project').id;
  const stored = await findStored(db, sampleId);
  if (!stored) throw new Error(`project ${sampleId} was created but is in no collection`);
  const sample = stored.doc;

  const copy = (i) => {
    const id = projectId(i);
    const at = projectCreatedAt(i);
    const doc = {};
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

  const fromModule = projectBuilder(sample, copy);
  const build = fromModule ?? copy;

  const removed = await call(serviceUrl, 'DELETE', `/project/${sampleId}`, { key: rootKey });
  if (removed.status !== 204) await db.collection(stored.collection).deleteOne({ _id: sample._id });
  await insertInBatches(db.collection(stored.collection), count, 0, build);
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

const itemId = (i) => seededId(ITEM_EPOCH_SEC, i);
const ITEM_EPOCH_MS = ITEM_EPOCH_SEC * 1000;

/** The client-visible fields of item i; `group` has 10 values, each on a tenth of the items. */
function itemBody(i) {
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
async function findPhysicalCollection(db, name, sampleId) {
  const existing = new Set(
    (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name),
  );
  const holdsSample = async (physical) =>
    existing.has(physical) && (await db.collection(physical).countDocuments({ _id: sampleId })) > 0;
  if (existing.has('data_collections')) {
    const entries = await db.collection('data_collections').find({}).limit(1000).toArray();
    for (const entry of entries.filter((e) => Object.values(e).includes(name))) {
      for (const value of Object.values(entry)) {
        if (typeof value === 'string' && value !== name && (await holdsSample(value))) {
          return { physical: value, via: 'registry data_collections' };
        }
      }
    }
  }
  for (const physical of existing) {
    if (await holdsSample(physical)) return { physical, via: 'search for the sample item' };
  }
  return undefined;
}

/**
 * Creates the collection `name` through the API (one item, then the indexes the scenarios use:
 * a unique one on `sku` and one on `group`) and learns the stored shape of an item. Returns
 * undefined when the service has no data routes.
 */
async function setupItems({ db, serviceUrl, rootKey }, name) {
  const sampleBody = { ...itemBody(0), sku: 'sku-sample', n: -1 };
  const created = await call(serviceUrl, 'POST', `/data/${name}`, {
    key: rootKey,
    body: { item: sampleBody },
  });
  if (routeMissing(created)) return undefined;
  const sampleId = expectStatus(created, 200, `POST /data/${name}`)._id;
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
  const sample = await db.collection(found.physical).findOne({ _id: { $in: ids } });
  return {
    name,
    physical: found.physical,
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
async function setupStandInItems({ db }, name, subject) {
  const physical = 'bench_standin_items';
  const collection = db.collection(physical);
  await collection.createIndex({ sku: 1 }, { unique: true });
  await collection.createIndex({ group: 1 });
  const now = new Date();
  const sample = { _id: '', ...itemBody(0), userId: subject, _createdAt: now, _updatedAt: now };
  return {
    name,
    physical,
    via: 'stand-in (no data routes)',
    sample,
    bodyFields: Object.keys(itemBody(0)),
    size: 0,
  };
}

/** What the baseline needs to write items the way the service does. */
function itemTemplate(items) {
  const constants = {};
  for (const [key, value] of Object.entries(items.sample)) {
    if (!['_id', '_createdAt', '_updatedAt', ...items.bodyFields].includes(key))
      constants[key] = value;
  }
  return {
    physical: items.physical,
    idType: items.sample._id instanceof ObjectId ? 'objectId' : 'string',
    ownerField: 'userId',
    constants,
  };
}

/**
 * Grows the items collection to `size` documents (ids itemId(items.size) … itemId(size - 1)).
 * Each document is the sample item's stored document with _id, the body fields and the two
 * timestamps replaced; everything else the service stored (the stamped owner field, any
 * internal field) is copied as it is.
 */
async function seedItems({ db }, items, size) {
  const { sample } = items;
  const build = (i) => {
    const body = itemBody(i);
    const at = new Date(ITEM_EPOCH_MS + i * 10);
    const doc = {};
    for (const [key, value] of Object.entries(sample)) {
      if (key === '_id') doc[key] = idLike(value, itemId(i));
      else if (key === '_createdAt' || key === '_updatedAt') doc[key] = dateLike(value, at);
      else if (key in body) doc[key] = body[key];
      else doc[key] = value;
    }
    return doc;
  };
  await insertInBatches(db.collection(items.physical), size, items.size, build);
  items.size = size;
}

module.exports = {
  seedProjects,
  setupItems,
  setupStandInItems,
  seedItems,
  itemTemplate,
  itemId,
  PAYLOAD,
};
