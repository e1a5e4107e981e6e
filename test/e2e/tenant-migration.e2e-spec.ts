import { TenantKindMigration } from '../../src/migrations/tenant-kind.migration';
import { createTestApp, uniqueDbName, type TestApp } from '../support/app';
import { readFixture, restoreCollections, type RecordedCollections } from '../support/fixture';

/**
 * Boots today's service on a database that version 0.1.0 populated through its API (the
 * fixture was dumped from it): a team, a user registered afterwards with the team's id as its
 * subject (so 0.1.0 gave both one namespace), and an ordinary user with collections in two
 * branches and an index.
 */
interface LegacyFixture {
  keys: { team: string; clash: string; other: string };
  teamId: string;
  collections: RecordedCollections;
}

const fixture = readFixture<LegacyFixture>('legacy-0.1.0.json');

const as = (key: string) => ({ 'X-Api-Key': key });
const names = (body: unknown) => (body as { name: string }[]).map((c) => c.name);

describe('migration of 0.1.0 data namespaces', () => {
  let t: TestApp;
  let second: TestApp;
  const dbName = uniqueDbName(__filename);

  beforeAll(async () => {
    await restoreCollections(dbName, fixture.collections);
    // Two instances boot on the same legacy database at once, as a rolling start would.
    [t, second] = await Promise.all([
      createTestApp(__filename, { MONGODB_DB_NAME: dbName, MAX_INDEXES: '2' }),
      createTestApp(__filename, { MONGODB_DB_NAME: dbName, MAX_INDEXES: '2' }),
    ]);
  });
  afterAll(async () => {
    await second.app.close();
    await t.close();
  });

  it('stamps every registry entry with its tenant kind and drops the old unique indexes', async () => {
    const registry = t.connection.collection('data_collections');
    const entries = await registry.find({}).sort({ createdAt: 1 }).toArray();
    expect(entries.map((e) => [e.tenant, e.branch, e.name, e.tenantKind])).toEqual([
      [fixture.teamId, '', 'payroll', 'team'],
      [fixture.teamId, '', 'notes', 'team'],
      ['ada', '', 'todo', 'user'],
      ['ada', 'dev', 'todo', 'user'],
    ]);
    const indexNames = (await registry.listIndexes().toArray()).map((i) => String(i.name));
    expect(indexNames).not.toContain('tenant_1_branch_1_name_1');
    expect(indexNames).not.toContain('tenant_1_branch_1_slot_1');
    expect(indexNames).toEqual(expect.arrayContaining(['namespace_name', 'namespace_slot']));
  });

  it('is idempotent: a second run stamps nothing', async () => {
    expect(await t.app.get(TenantKindMigration).run()).toBe(0);
  });

  it('gives the shared namespace to the team, which existed first, with every item intact', async () => {
    const collections = await t.http().get('/data').set(as(fixture.keys.team)).expect(200);
    expect(names(collections.body)).toEqual(['notes', 'payroll']);
    const item = await t.http().get('/data/payroll/_id/p1').set(as(fixture.keys.team)).expect(200);
    expect(item.body.salary).toBe(123456);
    const index = await t.http().get('/data/payroll/index').set(as(fixture.keys.team)).expect(200);
    expect(names(index.body)).toEqual(['_id_', 'salary_1']);
    const note = await second.http().get('/data/notes/_id/n1').set(as(fixture.keys.team));
    expect(note.status).toBe(200);
  });

  it('leaves the user who took the team id with a namespace of its own', async () => {
    const before = await t.http().get('/data').set(as(fixture.keys.clash)).expect(200);
    expect(before.body).toEqual([]);
    await t.http().get('/data/payroll/_id/p1').set(as(fixture.keys.clash)).expect(404);
    await t
      .http()
      .post('/data/notes')
      .set(as(fixture.keys.clash))
      .send({ item: { _id: 'n1', text: 'mine now' } })
      .expect(200);
    const teamNote = await t.http().get('/data/notes/_id/n1').set(as(fixture.keys.team));
    expect(teamNote.body.text).toBe('written by the clashing user');
  });

  it("keeps an ordinary user's collections, branches and indexes as they were", async () => {
    const main = await t.http().get('/data/todo').set(as(fixture.keys.other)).expect(200);
    expect(main.body.map((i: { _id: string }) => i._id).sort()).toEqual(['t1', 't2']);
    const dev = await t
      .http()
      .get('/data/todo')
      .set(as(fixture.keys.other))
      .set('X-Branch', 'dev')
      .expect(200);
    expect(dev.body.map((i: { _id: string }) => i._id)).toEqual(['d1']);
    const done = await t.http().get('/data/todo/done/true').set(as(fixture.keys.other)).expect(200);
    expect(done.body._id).toBe('t2');
  });

  it('counts an index made by 0.1.0 against the index quota', async () => {
    // todo has done_1 from 0.1.0; MAX_INDEXES is 2 here.
    await t
      .http()
      .post('/data/todo/index')
      .set(as(fixture.keys.other))
      .send({ field: 'title' })
      .expect(200);
    const res = await second
      .http()
      .post('/data/todo/index')
      .set(as(fixture.keys.other))
      .send({ field: 'owner' })
      .expect(409);
    expect(res.body.code).toBe('INDEX_QUOTA_EXCEEDED');
  });
});
