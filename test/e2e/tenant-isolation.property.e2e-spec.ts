import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { createTestApp, testDatabaseUri, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { createSubKey, createTeam, type TestUser } from '../support/factories';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';

// The property runs take about 25–35 s on two quiet cores and two to three times that on a busy
// machine; the bound only ends a run that hangs.
jest.setTimeout(240_000);

/**
 * Property: whatever identifiers principals have — subjects equal to or prefixes of team ids and
 * of each other, accountIds equal to subjects, team ids or each other, any allowed character —
 * and whatever they write, each one reads, counts, lists and changes exactly what it owns:
 *   - root and team keys: everything in their own (kind, id, branch) namespace;
 *   - sub keys: the items of their root's namespace whose owner field holds their accountId
 *     (the contract's owner value; a root that gives a sub profile its own subject as accountId
 *     shares its own items with it, which is the root's choice).
 * Projects: root and team keys see exactly their own.
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 8);
const SUBJECT_CHARS = 'ABCXYZabcxyz0189._:@|+-'.split('');
const COLLECTIONS = ['a', 'b'] as const;
const BRANCHES = ['', 'dev'] as const;

/**
 * The principals' tenants are spread over three clusters (this run's database server and two of
 * the file's own), so isolation is checked between tenants in different databases and on
 * different servers, as well as between tenants on one.
 */
let t: TestApp;
let clusters: OwnDatabase[] = [];
beforeAll(async () => {
  clusters = await Promise.all([startOwnDatabase('isolation-1'), startOwnDatabase('isolation-2')]);
  t = await createTestApp(__filename, {
    DATA_CLUSTERS: JSON.stringify({
      main: { uri: testDatabaseUri(), region: 'eu' },
      one: { uri: clusters[0]?.uri, region: 'eu' },
      two: { uri: clusters[1]?.uri, region: 'us' },
    }),
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all(clusters.map((cluster) => cluster.stop()));
});

type Principal =
  | { kind: 'team'; key: string; id: string }
  | { kind: 'root'; key: string; id: string }
  | { kind: 'sub'; key: string; id: string; accountId: string };

interface Written {
  namespace: string;
  collection: string;
  marker: string;
  owner: string;
}

const namespaceOf = (p: Principal, branch: string) =>
  `${p.kind === 'team' ? 'team' : 'user'}\u0000${p.id}\u0000${branch}`;
const ownerValueOf = (p: Principal) => (p.kind === 'sub' ? p.accountId : p.id);
const branchesOf = (p: Principal) => (p.kind === 'sub' ? [''] : BRANCHES);

/** What `p` may see of collection `c` in `branch`, by the model. */
function visible(written: Written[], p: Principal, collection: string, branch: string): string[] {
  return written
    .filter((w) => w.namespace === namespaceOf(p, branch) && w.collection === collection)
    .filter((w) => p.kind !== 'sub' || w.owner === p.accountId)
    .map((w) => w.marker)
    .sort();
}

/** A subject derived from earlier ids (equal, prefix, or extension) or made of allowed chars. */
const subjectSeed = fc.oneof(
  fc.record({
    from: fc.constant('id' as const),
    index: fc.nat(),
    // Half of them equal to an earlier id, the others a prefix of it.
    cut: fc.oneof(fc.constant(0), fc.nat({ max: 40 })),
  }),
  fc.record({
    from: fc.constant('extend' as const),
    index: fc.nat(),
    extra: fc.constantFrom(...SUBJECT_CHARS),
  }),
  fc.record({
    from: fc.constant('chars' as const),
    text: fc
      .array(fc.constantFrom(...SUBJECT_CHARS), { minLength: 1, maxLength: 10 })
      .map((c) => c.join('')),
  }),
);

const scenario = fc.record({
  subjects: fc.array(subjectSeed, { minLength: 2, maxLength: 4 }),
  subs: fc.array(
    fc.record({
      root: fc.nat(),
      accountFrom: fc.nat(),
      clientId: fc.constantFrom('c1', 'c2'),
    }),
    { maxLength: 3 },
  ),
  writes: fc.array(
    fc.record({
      by: fc.nat(),
      collection: fc.constantFrom(...COLLECTIONS),
      branch: fc.constantFrom(...BRANCHES),
      ownerFromBody: fc.option(fc.nat(), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 10 },
  ),
});

const as = (key: string) => ({ 'X-Api-Key': key });
const pick = <T>(list: readonly T[], n: number): T => list[n % list.length] as T;

async function registerUser(subject: string): Promise<TestUser | null> {
  const email = `u-${randomBytes(6).toString('hex')}@example.com`;
  const res = await t.http().post('/admin/users').set(as(TEST_ADMIN_KEY)).send({ email, subject });
  // A subject an earlier run already registered: the scenario goes on without it.
  if (res.status === 409) return null;
  expect(res.status).toBe(200);
  return { subject, email, apiKey: res.body.apiKey, profileId: res.body.profile.id };
}

it('no principal reads, counts, lists or changes anything it does not own', async () => {
  await fc.assert(
    fc.asyncProperty(scenario, async ({ subjects, subs, writes }) => {
      const principals: Principal[] = [];
      const ids: string[] = [];
      for (let i = 0; i < 2; i += 1) {
        const team = await createTeam(t);
        principals.push({ kind: 'team', key: team.apiKey, id: team.teamId });
        ids.push(team.teamId);
      }
      const users: TestUser[] = [];
      for (const seed of subjects) {
        const base = seed.from === 'chars' ? seed.text : pick(ids, seed.index);
        const subject =
          seed.from === 'id'
            ? base.slice(0, Math.max(1, base.length - seed.cut))
            : seed.from === 'extend'
              ? `${base}${seed.extra}`
              : base;
        if (ids.includes(subject) && users.some((u) => u.subject === subject)) continue;
        const user = await registerUser(subject);
        if (!user) continue;
        users.push(user);
        principals.push({ kind: 'root', key: user.apiKey, id: user.subject });
        ids.push(user.subject);
      }
      for (const spec of subs) {
        if (users.length === 0) break;
        const root = pick(users, spec.root);
        const accountId = pick(ids, spec.accountFrom);
        const taken = principals.some(
          (p) => p.kind === 'sub' && p.id === root.subject && p.accountId === accountId,
        );
        if (taken) continue;
        const sub = await createSubKey(t, root, { clientId: spec.clientId, accountId });
        principals.push({ kind: 'sub', key: sub.apiKey, id: root.subject, accountId });
      }

      const written: Written[] = [];
      const projects: { namespace: string; marker: string }[] = [];
      for (const w of writes) {
        const by = pick(principals, w.by);
        const branch = by.kind === 'sub' ? '' : w.branch;
        const marker = `m${randomBytes(5).toString('hex')}`;
        const item: Record<string, string> = { marker };
        // Root and team keys may file items for someone else; a sub key's owner is forced.
        if (w.ownerFromBody !== undefined) item.userId = pick(ids, w.ownerFromBody);
        await t
          .http()
          .post(`/data/${w.collection}`)
          .set(as(by.key))
          .set('X-Branch', branch)
          .send({ item })
          .expect(200);
        const owner =
          by.kind === 'sub' || item.userId === undefined ? ownerValueOf(by) : item.userId;
        written.push({
          namespace: namespaceOf(by, branch),
          collection: w.collection,
          marker,
          owner,
        });
        if (by.kind !== 'sub') {
          await t
            .http()
            .post('/project')
            .set(as(by.key))
            .set('X-Branch', branch)
            .send({ name: marker })
            .expect(200);
          projects.push({ namespace: namespaceOf(by, branch), marker });
        }
      }

      const checkEveryone = async (): Promise<void> => {
        for (const p of principals) {
          for (const branch of branchesOf(p)) {
            const listed = await t
              .http()
              .get('/data')
              .set(as(p.key))
              .set('X-Branch', branch)
              .expect(200);
            const expectedCollections = COLLECTIONS.filter((c) =>
              written.some((w) => w.namespace === namespaceOf(p, branch) && w.collection === c),
            );
            expect((listed.body as { name: string }[]).map((c) => c.name)).toEqual(
              expectedCollections,
            );
            for (const collection of COLLECTIONS) {
              const expected = visible(written, p, collection, branch);
              const list = await t
                .http()
                .get(`/data/${collection}?limit=500`)
                .set(as(p.key))
                .set('X-Branch', branch);
              const markers =
                list.status === 204 ? [] : (list.body as { marker: string }[]).map((i) => i.marker);
              expect(markers.sort()).toEqual(expected);
              const count = await t
                .http()
                .get(`/data/${collection}/count`)
                .set(as(p.key))
                .set('X-Branch', branch)
                .expect(200);
              expect(count.body.count).toBe(expected.length);
            }
            if (p.kind !== 'sub') {
              const own = await t
                .http()
                .get('/project?limit=500')
                .set(as(p.key))
                .set('X-Branch', branch)
                .expect(200);
              const expected = projects
                .filter((w) => w.namespace === namespaceOf(p, branch))
                .map((w) => w.marker)
                .sort();
              expect((own.body as { name: string }[]).map((x) => x.name).sort()).toEqual(expected);
            }
          }
        }
      };
      await checkEveryone();

      // Every principal tries to change and delete items it cannot see: nothing happens.
      for (const p of principals) {
        for (const w of written) {
          const branch = w.namespace.split('\u0000')[2] ?? '';
          if (p.kind === 'sub' && branch !== '') continue;
          if (visible(written, p, w.collection, branch).includes(w.marker)) continue;
          await t
            .http()
            .put(`/data/${w.collection}/marker/${w.marker}`)
            .set(as(p.key))
            .set('X-Branch', branch)
            .send({ values: { marker: 'changed' } })
            .expect(404);
          await t
            .http()
            .delete(`/data/${w.collection}/marker/${w.marker}`)
            .set(as(p.key))
            .set('X-Branch', branch)
            .expect(404);
        }
      }
      await checkEveryone();
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
  // The principals were on every cluster.
  const placed = await t.connection.collection('tenant_placements').distinct('cluster');
  expect(placed.sort()).toEqual(['main', 'one', 'two']);
});
