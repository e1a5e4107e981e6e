import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { ProjectListSpec } from '../../src/project/project.list-query';
import { buildListQuery, newProjectDocument } from '../../src/project/project.repository';
import { ProjectDocument, PROJECT_SORT_FIELDS } from '../../src/project/project.schema';
import type { ProjectOwner } from '../../src/project/project.types';
import { createTestApp, type TestApp } from '../support/app';
import {
  createApiKey,
  createProject,
  createSubKey,
  createTeam,
  createUser,
  type TestProject,
  type TestTeam,
  type TestUser,
} from '../support/factories';
import { anonymous, as, type Client } from '../support/http';
import { collectPages, ids, linkTarget, pluck } from '../support/paging';
import { errorFields, expectInvalid, expectProblem } from '../support/problems';

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NO_SUCH_ID = '000000000000000000000000';

describe('projects', () => {
  let t: TestApp;
  let user: TestUser;
  let otherUser: TestUser;
  let team: TestTeam;
  /** Clients of `user` and `team`. */
  let mine: Client;
  let teams: Client;

  beforeAll(async () => {
    t = await createTestApp(__filename);
    [user, otherUser, team] = await Promise.all([createUser(t), createUser(t), createTeam(t)]);
    mine = as(t, user);
    teams = as(t, team);
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /project', () => {
    it('creates a project owned by the root user in the standard branch', async () => {
      const res = await mine
        .post('/project', { name: 'Website relaunch', tags: ['web', 'q3'] })
        .expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        userId: user.subject,
        teamId: '',
        branch: '',
        name: 'Website relaunch',
        tags: ['web', 'q3'],
        createdAt: expect.stringMatching(RFC3339_MS),
        updatedAt: res.body.createdAt,
      });
    });

    it('creates a team project with userId empty and teamId set', async () => {
      const project = await createProject(t, team, { name: 'Team board' });
      expect(project).toMatchObject({ userId: '', teamId: team.teamId, tags: [] });
    });

    it('creates the project in the request branch given by X-Branch', async () => {
      const project = await createProject(t, user, { name: 'Staged' }, 'staging');
      expect(project.branch).toBe('staging');
    });

    it('creates in the branch a key is bound to', async () => {
      const bound = await createApiKey(t, user, { branch: 'bound-branch' });
      const project = await createProject(t, bound, { name: 'Bound' });
      expect(project.branch).toBe('bound-branch');
    });

    it('stores exactly the document newProjectDocument builds (so seeded data looks the same)', async () => {
      const project = await createProject(t, user, { name: 'Shape', tags: ['a'] });
      const stored = await t.connection
        .collection('projects')
        .findOne({ name: 'Shape', userId: user.subject });
      const built = newProjectDocument({ userId: user.subject, teamId: '' }, '', {
        name: 'Shape',
        tags: ['a'],
      });
      expect(Object.keys(stored!).sort()).toEqual(Object.keys(built).sort());
      expect(stored).toEqual({
        ...built,
        _id: stored!._id,
        createdAt: new Date(project.createdAt),
        updatedAt: new Date(project.updatedAt),
      });
    });

    it('accepts a name of 200 characters and 50 tags of 64 characters', async () => {
      const tags = Array.from({ length: 50 }, (_, i) => `${i}`.padStart(64, 't'));
      const project = await createProject(t, user, { name: 'n'.repeat(200), tags });
      expect(project.tags).toEqual(tags);
    });

    it('returns 400 listing every invalid field', async () => {
      const res = await mine.post('/project', { name: '', tags: ['ok', ''], extra: true });
      expectInvalid(res, 'extra', 'name', 'tags');
    });

    it.each([
      ['a missing name', { tags: ['x'] }, 'name'],
      ['a name of 201 characters', { name: 'n'.repeat(201) }, 'name'],
      ['a null name', { name: null }, 'name'],
      ['a name that is not a string', { name: 5 }, 'name'],
      ['duplicate tags', { name: 'p', tags: ['a', 'b', 'a'] }, 'tags'],
      ['51 tags', { name: 'p', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'tags'],
      ['a tag of 65 characters', { name: 'p', tags: ['t'.repeat(65)] }, 'tags'],
      ['an empty tag', { name: 'p', tags: [''] }, 'tags'],
      ['a tag that is not a string', { name: 'p', tags: [1] }, 'tags'],
      ['tags that are not an array', { name: 'p', tags: 'a' }, 'tags'],
      ['null tags', { name: 'p', tags: null }, 'tags'],
    ])('returns 400 for %s', async (_label, body, field) => {
      expectInvalid(await mine.post('/project', body), field);
    });

    it('returns 401 without a key and with an unknown key', async () => {
      expectProblem(await anonymous(t).post('/project', { name: 'x' }), 401, 'UNAUTHENTICATED');
      await as(t, 'pds_unknown').post('/project', { name: 'x' }).expect(401);
    });
  });

  describe('sub keys', () => {
    it('returns 403 on every project route', async () => {
      const sub = as(t, await createSubKey(t, user));
      const project = await createProject(t, user, { name: 'Not for subs' });
      const path = `/project/${project.id}`;
      const responses = await Promise.all([
        sub.post('/project', { name: 'x' }),
        sub.get('/project'),
        sub.get(path),
        sub.put(path, { name: 'x' }),
        sub.delete(path),
      ]);
      for (const res of responses) expectProblem(res, 403, 'FORBIDDEN');
      await mine.get(path).expect(200);
    });
  });

  describe('GET /project/{projectId}', () => {
    it('returns the caller’s project', async () => {
      const project = await createProject(t, user, { name: 'Readable', tags: ['r'] });
      const res = await mine.get(`/project/${project.id}`).expect(200);
      expect(res.body).toEqual(project);
    });

    it('returns 404 for another user’s project', async () => {
      const project = await createProject(t, user, { name: 'Private' });
      const res = await as(t, otherUser).get(`/project/${project.id}`);
      expectProblem(res, 404, 'PROJECT_NOT_FOUND');
    });

    it('returns 404 between a user and a team in both directions', async () => {
      const users = await createProject(t, user, { name: 'User owned' });
      const teamOwned = await createProject(t, team, { name: 'Team owned' });
      await teams.get(`/project/${users.id}`).expect(404);
      await mine.get(`/project/${teamOwned.id}`).expect(404);
      await teams.get(`/project/${teamOwned.id}`).expect(200);
    });

    it('returns 404 for a project of another branch', async () => {
      const project = await createProject(t, user, { name: 'Branched' }, 'feature-a');
      const path = `/project/${project.id}`;
      await mine.get(path).expect(404);
      await mine.get(path, { branch: 'feature-b' }).expect(404);
      await mine.get(path, { branch: 'feature-a' }).expect(200);
    });

    it.each(['not-an-id', 'zzzzzzzzzzzzzzzzzzzzzzzz', '123', '0123456789ab', '%24ne'])(
      'returns 404 (not 400) for the malformed id %s',
      async (id) => {
        expectProblem(await mine.get(`/project/${id}`), 404, 'PROJECT_NOT_FOUND');
      },
    );

    it('returns 404 for an id that does not exist', async () => {
      await mine.get(`/project/${NO_SUCH_ID}`).expect(404);
    });

    it('returns 401 without a key', async () => {
      await anonymous(t).get(`/project/${NO_SUCH_ID}`).expect(401);
    });

    it('returns 400 for an invalid X-Branch', async () => {
      const res = await mine.get(`/project/${NO_SUCH_ID}`, { branch: 'Not Valid' });
      expectProblem(res, 400, 'INVALID_BRANCH');
    });
  });

  describe('PUT /project/{projectId}', () => {
    it('changes the name and keeps the tags', async () => {
      const project = await createProject(t, user, { name: 'Old', tags: ['keep'] });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const res = await mine.put(`/project/${project.id}`, { name: 'New' }).expect(200);
      expect(res.body).toEqual({
        ...project,
        name: 'New',
        updatedAt: expect.stringMatching(RFC3339_MS),
      });
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(project.updatedAt));
      expect((await mine.get(`/project/${project.id}`)).body).toEqual(res.body);
    });

    it('replaces the tags, and [] removes them', async () => {
      const project = await createProject(t, team, { name: 'Tagged', tags: ['a', 'b'] });
      const replaced = await teams.put(`/project/${project.id}`, { tags: ['c'] }).expect(200);
      expect(replaced.body).toMatchObject({ name: 'Tagged', tags: ['c'] });
      const cleared = await teams.put(`/project/${project.id}`, { tags: [] }).expect(200);
      expect(cleared.body.tags).toEqual([]);
    });

    it('returns 400 for an empty body, and changes nothing', async () => {
      const project = await createProject(t, user, { name: 'Unchanged' });
      const path = `/project/${project.id}`;
      expectProblem(await mine.put(path, {}), 400, 'VALIDATION_FAILED');
      await mine.put(path).expect(400);
      expect((await mine.get(path)).body).toEqual(project);
    });

    it('returns 400 for invalid fields and unknown fields', async () => {
      const project = await createProject(t, user, { name: 'Strict' });
      const path = `/project/${project.id}`;
      const res = await mine.put(path, { name: '', tags: ['x', 'x'], userId: 'someone-else' });
      expectInvalid(res, 'name', 'tags', 'userId');
      expectInvalid(await mine.put(path, { name: null }), 'name');
    });

    it('returns 404 for another owner’s, another branch’s or a malformed id, and changes nothing', async () => {
      const project = await createProject(t, user, { name: 'Mine' });
      for (const [owner, branch, id] of [
        [otherUser, undefined, project.id],
        [team, undefined, project.id],
        [user, 'other', project.id],
        [user, undefined, 'malformed'],
      ] as const) {
        const res = await as(t, owner).put(`/project/${id}`, { name: 'Stolen' }, { branch });
        expectProblem(res, 404, 'PROJECT_NOT_FOUND');
      }
      expect((await mine.get(`/project/${project.id}`)).body.name).toBe('Mine');
    });
  });

  describe('DELETE /project/{projectId}', () => {
    it('deletes the project with 204 and no body; it is gone afterwards', async () => {
      const project = await createProject(t, user, { name: 'Doomed' });
      const path = `/project/${project.id}`;
      const res = await mine.delete(path).expect(204);
      expect(res.text).toBe('');
      await mine.get(path).expect(404);
      await mine.delete(path).expect(404);
    });

    it('returns 404 for another owner’s, another branch’s or a malformed id, and keeps the project', async () => {
      const project = await createProject(t, team, { name: 'Kept' });
      const path = `/project/${project.id}`;
      await mine.delete(path).expect(404);
      await teams.delete(path, undefined, { branch: 'elsewhere' }).expect(404);
      expectProblem(await teams.delete('/project/xyz'), 404, 'PROJECT_NOT_FOUND');
      await teams.get(path).expect(200);
    });

    it('returns 401 without a key', async () => {
      await anonymous(t).delete(`/project/${NO_SUCH_ID}`).expect(401);
    });
  });

  describe('GET /project', () => {
    let lister: Client;
    let listerTeam: TestTeam;
    let alpha: TestProject;
    let beta: TestProject;
    let gamma: TestProject;

    beforeAll(async () => {
      let owner: TestUser;
      [owner, listerTeam] = await Promise.all([createUser(t), createTeam(t)]);
      lister = as(t, owner);
      alpha = await createProject(t, owner, { name: 'alpha', tags: ['red', 'blue'] });
      beta = await createProject(t, owner, { name: 'beta', tags: ['blue'] });
      gamma = await createProject(t, owner, { name: 'gamma', tags: [] });
      await createProject(t, owner, { name: 'alpha', tags: ['red'] }, 'dev');
      await createProject(t, listerTeam, { name: 'alpha', tags: ['red'] });
    });

    /** The ids of the projects among alpha, beta and gamma (ascending) that pass `keep`. */
    const idsWhere = (keep: (p: TestProject) => boolean) =>
      [alpha, beta, gamma].filter(keep).map((p) => p.id);

    it('lists only the caller’s projects of the request branch, newest first', async () => {
      const res = await lister.get('/project').expect(200);
      expect(res.body).toEqual([gamma, beta, alpha]);
      expect(res.headers.link).toBeUndefined();
      const dev = await lister.get('/project', { branch: 'dev' }).expect(200);
      expect(dev.body.map((p: TestProject) => [p.name, p.branch])).toEqual([['alpha', 'dev']]);
      const ofTeam = await as(t, listerTeam).get('/project').expect(200);
      expect(pluck(ofTeam, 'teamId')).toEqual([listerTeam.teamId]);
    });

    it('returns an empty array for an owner without projects', async () => {
      const fresh = await createUser(t);
      expect((await as(t, fresh).get('/project').expect(200)).body).toEqual([]);
    });

    it('sorts by name, ascending or descending', async () => {
      const asc = await lister.get('/project?sort=name&sortOrder=asc').expect(200);
      expect(pluck(asc, 'name')).toEqual(['alpha', 'beta', 'gamma']);
      const desc = await lister.get('/project?sort=name').expect(200);
      expect(pluck(desc, 'name')).toEqual(['gamma', 'beta', 'alpha']);
    });

    it('sorts by createdAt ascending and by updatedAt', async () => {
      const asc = await lister.get('/project?sortOrder=asc').expect(200);
      expect(asc.body).toEqual([alpha, beta, gamma]);
      await lister.put(`/project/${alpha.id}`, { tags: ['red', 'blue'] }).expect(200);
      const updated = await lister.get('/project?sort=updatedAt').expect(200);
      expect(pluck(updated, 'name')).toEqual(['alpha', 'gamma', 'beta']);
    });

    it('filters by name, tag, filter[name] and filter[tag]', async () => {
      for (const [query, expected] of [
        ['?name=beta', [beta.id]],
        ['?tag=blue&sortOrder=asc', [alpha.id, beta.id]],
        ['?filter[tag]=red', [alpha.id]],
        ['?filter%5Bname%5D=gamma', [gamma.id]],
        ['?tag=blue&name=alpha&sort=name', [alpha.id]],
        ['?tag=absent', []],
      ] as const) {
        const res = await lister.get(`/project${query}`).expect(200);
        expect({ query, ids: ids(res) }).toEqual({ query, ids: expected });
      }
    });

    it('limits the page and links to the next one', async () => {
      const whole = await lister.get('/project?limit=2&tag=blue&sortOrder=asc').expect(200);
      expect(ids(whole)).toEqual([alpha.id, beta.id]);
      expect(whole.headers.link).toBeUndefined();
      const first = await lister.get('/project?limit=1&sortOrder=asc&tag=blue').expect(200);
      expect(ids(first)).toEqual([alpha.id]);
      const target = linkTarget(first);
      expect(target).toBeDefined();
      const next = new URL(target!, 'http://x');
      expect(next.pathname).toBe('/project');
      expect(Object.fromEntries(next.searchParams)).toEqual({
        limit: '1',
        sortOrder: 'asc',
        tag: 'blue',
        'after[createdAt]': alpha.createdAt,
        'after[id]': alpha.id,
      });
      const second = await lister.get(`${next.pathname}${next.search}`).expect(200);
      expect(ids(second)).toEqual([beta.id]);
      expect(second.headers.link).toBeUndefined();
    });

    it('returns entries strictly after or before a createdAt value (RFC 3339, any offset)', async () => {
      const at = (iso: string) => encodeURIComponent(iso);
      const after = await lister
        .get(`/project?sortOrder=asc&after[createdAt]=${at(alpha.createdAt)}`)
        .expect(200);
      expect(ids(after)).toEqual(idsWhere((p) => p.createdAt > alpha.createdAt));
      const before = await lister
        .get(`/project?sortOrder=asc&before[createdAt]=${at(gamma.createdAt)}`)
        .expect(200);
      expect(ids(before)).toEqual(idsWhere((p) => p.createdAt < gamma.createdAt));
      const offset = await lister
        .get(`/project?sortOrder=asc&after[createdAt]=${at('2000-01-01T01:00:00+01:00')}`)
        .expect(200);
      expect(ids(offset)).toEqual([alpha.id, beta.id, gamma.id]);
      // An unencoded + arrives as a space; it is still read as the offset sign.
      const plus = await lister
        .get('/project?sortOrder=asc&after[createdAt]=2000-01-01T01:00:00+01:00')
        .expect(200);
      expect(ids(plus)).toEqual([alpha.id, beta.id, gamma.id]);
      const future = await lister
        .get(`/project?after[createdAt]=${at('2100-01-01T00:00:00Z')}&sortOrder=asc`)
        .expect(200);
      expect(future.body).toEqual([]);
    });

    it('compares sub-millisecond cursor values exactly against millisecond timestamps', async () => {
      // alpha's instant + 0.4 ms: alpha is before it, everything later than alpha is after it.
      const justAfterAlpha = encodeURIComponent(alpha.createdAt.replace('Z', '400Z'));
      const after = await lister
        .get(`/project?sortOrder=asc&after[createdAt]=${justAfterAlpha}&after[id]=${alpha.id}`)
        .expect(200);
      expect(ids(after)).toEqual(idsWhere((p) => p.createdAt > alpha.createdAt));
      const before = await lister
        .get(`/project?sortOrder=asc&before[createdAt]=${justAfterAlpha}`)
        .expect(200);
      expect(ids(before)).toContain(alpha.id);
      expect(ids(before)).toEqual(idsWhere((p) => p.createdAt <= alpha.createdAt));
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['sort=priority', 'sort'],
      ['sortOrder=up', 'sortOrder'],
      ['after[createdAt]=yesterday', 'after[createdAt]'],
      ['after[createdAt]=2026-02-30T00:00:00Z', 'after[createdAt]'],
      ['before[updatedAt]=2026-01-01&sort=updatedAt', 'before[updatedAt]'],
      ['after[name]=alpha', 'after[name]'],
      ['sort=name&after[createdAt]=2026-01-01T00:00:00Z', 'after[createdAt]'],
      ['after[id]=665f1c2a9b1e8a0012345678', 'after[id]'],
      ['after[createdAt]=2026-01-01T00:00:00Z&after[id]=nothex', 'after[id]'],
      ['after[priority]=1', 'after[priority]'],
      ['tag=a&tag=b', 'tag'],
      ['existsFilter[name]=true', 'existsFilter[name]'],
      ['name[$ne]=x', 'name[$ne]'],
      ['filter[name][$ne]=x', 'filter[name][$ne]'],
      ['filter[owner]=x', 'owner'],
    ])('returns 400 for %s', async (query, field) => {
      expectInvalid(await lister.get(`/project?${query}`), field);
    });

    it('returns 400 naming the allowed keys for an unknown key', async () => {
      const res = await lister.get('/project?color=red&userId=someone').expect(400);
      expect(errorFields(res)).toEqual(['color', 'userId']);
      for (const error of res.body.errors as { message: string }[]) {
        expect(error.message).toContain('name, tag');
        expect(error.message).toContain('filter[tag]');
      }
      expect(res.body.detail).toContain('sort, sortOrder, limit');
    });

    it('cannot be turned into an operator query by the query string', async () => {
      const res = await lister.get('/project?name[$ne]=nothing&tag[$exists]=true').expect(400);
      expect(errorFields(res)).toEqual(['name[$ne]', 'tag[$exists]']);
      const literal = await lister.get(`/project?name=${encodeURIComponent('{"$ne":"x"}')}`);
      expect(literal.status).toBe(200);
      expect(literal.body).toEqual([]);
    });

    it('returns 401 without a key', async () => {
      await anonymous(t).get('/project').expect(401);
    });

    it('bounds the list and read queries with maxTimeMS = QUERY_TIMEOUT_MS', async () => {
      const seen: { method: string; options: unknown }[] = [];
      t.connection.set('debug', (collection: string, method: string, ...args: unknown[]) => {
        if (collection === 'projects') seen.push({ method, options: args[1] });
      });
      try {
        await lister.get('/project?tag=blue').expect(200);
        await lister.get(`/project/${alpha.id}`).expect(200);
      } finally {
        t.connection.set('debug', false);
      }
      const reads = seen.filter((s) => s.method === 'find' || s.method === 'findOne');
      expect(reads.map((s) => s.method)).toEqual(['find', 'findOne']);
      for (const read of reads) {
        expect(read.options).toMatchObject({ maxTimeMS: t.config.database.queryTimeoutMs });
      }
    });
  });

  describe('keyset pagination over 1,200 projects', () => {
    let walker: TestUser;
    let walks: Client;
    let seeded: ProjectDocument[];
    let owner: ProjectOwner;

    // Ties are deliberate: 7 projects share each createdAt/updatedAt and 13 distinct names
    // repeat ~92 times, so a cursor without the id would skip or repeat entries.
    beforeAll(async () => {
      walker = await createUser(t);
      walks = as(t, walker);
      owner = { userId: walker.subject, teamId: '' };
      const base = Date.parse('2026-01-01T00:00:00.000Z');
      seeded = Array.from({ length: 1200 }, (_, i) =>
        newProjectDocument(
          owner,
          '',
          {
            name: `name-${String(i % 13).padStart(2, '0')}`,
            tags: i % 2 === 0 ? ['even'] : ['odd'],
          },
          new Date(base + Math.floor(i / 7) * 1000),
        ),
      );
      // Noise that must never appear: the same owner in another branch, and another owner.
      const noise = [
        newProjectDocument(owner, 'other', { name: 'name-00', tags: ['even'] }, new Date(base)),
        newProjectDocument(
          { userId: otherUser.subject, teamId: '' },
          '',
          { name: 'name-00', tags: ['even'] },
          new Date(base),
        ),
        newProjectDocument(
          { userId: '', teamId: walker.subject },
          '',
          { name: 'name-00', tags: ['even'] },
          new Date(base),
        ),
      ];
      await t.connection.collection('projects').insertMany([...seeded, ...noise]);
    });

    function expectedOrder(field: 'createdAt' | 'name', order: 'asc' | 'desc', docs = seeded) {
      const sign = order === 'asc' ? 1 : -1;
      const value = (d: ProjectDocument) => (field === 'name' ? d.name : d.createdAt.toISOString());
      return [...docs]
        .sort((a, b) => {
          const va = value(a);
          const vb = value(b);
          if (va !== vb) return va < vb ? -sign : sign;
          const ia = a._id.toHexString();
          const ib = b._id.toHexString();
          return ia < ib ? -sign : sign;
        })
        .map((d) => d._id.toHexString());
    }

    /** Every id, page by page: each next query is `firstQuery` plus the cursor of the last entry. */
    async function walk(
      firstQuery: string,
      cursor: (last: TestProject) => string,
    ): Promise<string[]> {
      const walked: string[] = [];
      let query = firstQuery;
      for (let pages = 0; pages < 100; pages += 1) {
        const res = await walks.get(`/project?${query}`).expect(200);
        const body = res.body as TestProject[];
        walked.push(...ids(res));
        if (!res.headers.link) return walked;
        query = `${firstQuery}&${cursor(body[body.length - 1]!)}`;
      }
      throw new Error('more than 100 pages');
    }

    it('visits every project exactly once by after[createdAt] + after[id], in order', async () => {
      const walked = await walk(
        'limit=100',
        (last) => `after[createdAt]=${encodeURIComponent(last.createdAt)}&after[id]=${last.id}`,
      );
      expect(walked).toHaveLength(1200);
      expect(new Set(walked).size).toBe(1200);
      expect(walked).toEqual(expectedOrder('createdAt', 'desc'));
    });

    it('visits every project exactly once ascending with limit 500', async () => {
      const walked = await walk(
        'limit=500&sortOrder=asc',
        (last) => `after[createdAt]=${encodeURIComponent(last.createdAt)}&after[id]=${last.id}`,
      );
      expect(walked).toEqual(expectedOrder('createdAt', 'asc'));
    });

    it('visits every project exactly once sorted by a repeating name', async () => {
      const walked = await walk(
        'sort=name&sortOrder=asc&limit=100',
        (last) => `after[name]=${encodeURIComponent(last.name)}&after[id]=${last.id}`,
      );
      expect(walked).toHaveLength(1200);
      expect(walked).toEqual(expectedOrder('name', 'asc'));
    });

    it('skips the ties of a value when the cursor has no id (documented behaviour)', async () => {
      const first = await walks.get('/project?limit=3&sortOrder=asc').expect(200);
      const last = first.body[2] as TestProject;
      const next = await walks
        .get(
          `/project?limit=3&sortOrder=asc&after[createdAt]=${encodeURIComponent(last.createdAt)}`,
        )
        .expect(200);
      // The first 7 share a createdAt: the value-only cursor jumps to the 8th.
      expect(next.body[0].id).toBe(expectedOrder('createdAt', 'asc')[7]);
    });

    it('visits every project exactly once by following the Link header, keeping the filter', async () => {
      const pages = await collectPages(walks, '/project?tag=even&sort=updatedAt&limit=100', {
        maxPages: 6,
      });
      const evens = seeded.filter((d) => d.tags.includes('even'));
      expect(pages).toHaveLength(6);
      expect(pages.flatMap((page) => ids(page))).toEqual(expectedOrder('createdAt', 'desc', evens));
    });

    it('walks backwards with before[createdAt] + before[id] and rel="prev" links', async () => {
      const pages = await collectPages(
        walks,
        '/project?sortOrder=asc&limit=250&before[createdAt]=2100-01-01T00:00:00Z',
        { rel: 'prev', maxPages: 5 },
      );
      // Each page is in the requested (ascending) order and is the block right before the cursor.
      const pageIds = pages.map((page) => ids(page));
      expect(pageIds.map((p) => p.length)).toEqual([250, 250, 250, 250, 200]);
      expect(pageIds.reverse().flat()).toEqual(expectedOrder('createdAt', 'asc'));
    });

    it('returns the window between an after[] and a before[] cursor', async () => {
      const order = expectedOrder('createdAt', 'asc');
      const byId = new Map(seeded.map((d) => [d._id.toHexString(), d]));
      const from = byId.get(order[100]!)!;
      const to = byId.get(order[110]!)!;
      const res = await walks
        .get(
          `/project?sortOrder=asc&after[createdAt]=${from.createdAt.toISOString()}&after[id]=${from._id.toHexString()}` +
            `&before[createdAt]=${to.createdAt.toISOString()}&before[id]=${to._id.toHexString()}`,
        )
        .expect(200);
      expect(ids(res)).toEqual(order.slice(101, 110));
    });

    describe('index use', () => {
      let model: Model<ProjectDocument>;
      let explainSkipLogged = false;

      beforeAll(() => {
        model = t.app.get<Model<ProjectDocument>>(getModelToken(ProjectDocument.name));
      });

      function collectStages(plan: unknown, into: string[] = []): string[] {
        if (Array.isArray(plan)) {
          for (const p of plan) collectStages(p, into);
        } else if (plan && typeof plan === 'object') {
          for (const [key, value] of Object.entries(plan)) {
            if (key === 'stage' && typeof value === 'string') into.push(value);
            else collectStages(value, into);
          }
        }
        return into;
      }

      const cases: [string, Partial<ProjectListSpec>][] = PROJECT_SORT_FIELDS.flatMap((sort) =>
        (['asc', 'desc'] as const).flatMap((sortOrder): [string, Partial<ProjectListSpec>][] => {
          const value = sort === 'name' ? 'name-05' : new Date('2026-01-01T00:01:00.000Z');
          const id = '665f1c2a9b1e8a0012345678';
          return [
            [`${sort} ${sortOrder}`, { sort, sortOrder }],
            [`${sort} ${sortOrder} after value`, { sort, sortOrder, after: { value } }],
            [`${sort} ${sortOrder} after (value, id)`, { sort, sortOrder, after: { value, id } }],
            [`${sort} ${sortOrder} before (value, id)`, { sort, sortOrder, before: { value, id } }],
          ];
        }),
      );
      // Filters: served by an index too, though the planner may pick the other index and sort.
      cases.push(
        ['createdAt desc tag=even', { filters: { tag: 'even' } }],
        [
          'createdAt desc tag=even after (value, id)',
          {
            filters: { tag: 'even' },
            after: { value: new Date('2026-01-01T00:01:00.000Z'), id: '665f1c2a9b1e8a0012345678' },
          },
        ],
        ['name asc name=name-05', { sort: 'name', sortOrder: 'asc', filters: { name: 'name-05' } }],
        ['createdAt desc name=name-05', { filters: { name: 'name-05' } }],
      );

      it.each(cases)(
        'serves the list query %s from an index (no COLLSCAN; assertion skipped where explain has no winningPlan, e.g. FerretDB)',
        async (_label, partial) => {
          const spec: ProjectListSpec = {
            sort: 'createdAt',
            sortOrder: 'desc',
            limit: 100,
            filters: {},
            ...partial,
          };
          const query = buildListQuery(owner, '', spec);
          const docs = await model
            .find(query.filter)
            .sort(query.sort)
            .limit(query.limit)
            .lean<ProjectDocument[]>()
            .exec();
          expect(docs.length).toBeGreaterThan(0);
          expect(docs.every((d) => d.userId === walker.subject && d.branch === '')).toBe(true);

          const explain = (await model
            .find(query.filter)
            .sort(query.sort)
            .limit(query.limit)
            .explain('queryPlanner')) as unknown as { queryPlanner?: Record<string, unknown> };
          const planner = Array.isArray(explain)
            ? (explain[0] as typeof explain).queryPlanner
            : explain.queryPlanner;
          expect(planner).toBeDefined();
          if (!planner?.winningPlan) {
            if (!explainSkipLogged) {
              console.info(
                "project index assertions skipped: this database's explain has no queryPlanner.winningPlan (FerretDB reports its SQLite plan as queryPlanner.Plan), so index use cannot be checked here; the queries above still ran and returned the owner's projects",
              );
              explainSkipLogged = true;
            }
            return;
          }
          const stages = collectStages(planner.winningPlan);
          expect(stages).not.toContain('COLLSCAN');
          expect(stages).toContain('IXSCAN');
          // Unfiltered, the sort comes from the index order: no blocking in-memory sort.
          if (Object.keys(spec.filters).length === 0) expect(stages).not.toContain('SORT');
        },
      );

      it('declares one index per sort field led by owner and branch', async () => {
        const indexes = await t.connection.collection('projects').indexes();
        const keys = indexes.map((i) => i.key);
        for (const field of PROJECT_SORT_FIELDS) {
          expect(keys).toContainEqual({ userId: 1, teamId: 1, branch: 1, [field]: 1, _id: 1 });
        }
      });
    });
  });
});
