import { Types } from 'mongoose';
import type { ProjectListSpec } from './project.list-query';
import { buildListQuery, newProjectDocument, toProject } from './project.repository';

const owner = { userId: 'auth0|ada', teamId: '' };
const ID = '665f1c2a9b1e8a0012345678';
const T = new Date('2026-01-01T00:00:00.000Z');

function spec(partial: Partial<ProjectListSpec> = {}): ProjectListSpec {
  return { sort: 'createdAt', sortOrder: 'desc', limit: 50, filters: {}, ...partial };
}

describe('buildListQuery', () => {
  it('scopes by owner and branch, sorts by (field, _id) and fetches one extra', () => {
    expect(buildListQuery(owner, 'dev', spec())).toEqual({
      filter: { userId: 'auth0|ada', teamId: '', branch: 'dev' },
      sort: { createdAt: -1, _id: -1 },
      limit: 51,
      reversed: false,
    });
    expect(buildListQuery(owner, '', spec({ sort: 'name', sortOrder: 'asc' })).sort).toEqual({
      name: 1,
      _id: 1,
    });
  });

  it('matches a team owner by both fields', () => {
    const q = buildListQuery({ userId: '', teamId: 'team-1' }, '', spec());
    expect(q.filter).toEqual({ userId: '', teamId: 'team-1', branch: '' });
  });

  it('turns after[] into a strict bound in the direction of the order', () => {
    expect(buildListQuery(owner, '', spec({ after: { value: T } })).filter).toEqual({
      ...owner,
      branch: '',
      createdAt: { $lt: T },
    });
    expect(
      buildListQuery(owner, '', spec({ sortOrder: 'asc', after: { value: T } })).filter,
    ).toEqual({ ...owner, branch: '', createdAt: { $gt: T } });
  });

  it('makes a (value, id) cursor an inclusive range plus a tie-breaking $or', () => {
    const q = buildListQuery(owner, '', spec({ sortOrder: 'asc', after: { value: T, id: ID } }));
    expect(q.filter).toEqual({
      ...owner,
      branch: '',
      createdAt: { $gte: T },
      $or: [{ createdAt: { $gt: T } }, { _id: { $gt: new Types.ObjectId(ID) } }],
    });
    expect(q.sort).toEqual({ createdAt: 1, _id: 1 });
  });

  it('scans backwards from a before[] cursor given alone, for the caller to reverse', () => {
    const q = buildListQuery(owner, '', spec({ before: { value: T, id: ID } }));
    // desc order: "before" means greater values; the nearest ones come first when scanning up.
    expect(q.filter).toEqual({
      ...owner,
      branch: '',
      createdAt: { $gte: T },
      $or: [{ createdAt: { $gt: T } }, { _id: { $gt: new Types.ObjectId(ID) } }],
    });
    expect(q.sort).toEqual({ createdAt: 1, _id: 1 });
    expect(q.reversed).toBe(true);
  });

  it('combines after[] and before[] into a window scanned forwards', () => {
    const later = new Date('2026-02-01T00:00:00.000Z');
    const q = buildListQuery(
      owner,
      '',
      spec({ sortOrder: 'asc', after: { value: T, id: ID }, before: { value: later, id: ID } }),
    );
    expect(q.reversed).toBe(false);
    expect(q.filter).toEqual({
      ...owner,
      branch: '',
      createdAt: { $gte: T, $lte: later },
      $and: [
        { $or: [{ createdAt: { $gt: T } }, { _id: { $gt: new Types.ObjectId(ID) } }] },
        { $or: [{ createdAt: { $lt: later } }, { _id: { $lt: new Types.ObjectId(ID) } }] },
      ],
    });
  });

  it('filters by name and by tag with $eq (never an operator from the query string)', () => {
    expect(
      buildListQuery(owner, '', spec({ filters: { name: '{"$ne":1}', tag: 'web' } })).filter,
    ).toEqual({ ...owner, branch: '', name: { $eq: '{"$ne":1}' }, tags: { $eq: 'web' } });
  });

  it('merges a name filter into the range on the name sort field', () => {
    expect(
      buildListQuery(
        owner,
        '',
        spec({ sort: 'name', filters: { name: 'x' }, after: { value: 'x', id: ID } }),
      ).filter,
    ).toEqual({
      ...owner,
      branch: '',
      name: { $lte: 'x', $eq: 'x' },
      $or: [{ name: { $lt: 'x' } }, { _id: { $lt: new Types.ObjectId(ID) } }],
    });
  });
});

describe('newProjectDocument and toProject', () => {
  it('builds the stored shape and maps it back to a project', () => {
    const doc = newProjectDocument(owner, 'dev', { name: 'P', tags: ['a'] }, T);
    expect(doc).toEqual({
      _id: expect.any(Types.ObjectId),
      userId: 'auth0|ada',
      teamId: '',
      branch: 'dev',
      name: 'P',
      tags: ['a'],
      createdAt: T,
      updatedAt: T,
      revision: 0,
    });
    expect(toProject(doc)).toEqual({
      id: doc._id.toHexString(),
      userId: 'auth0|ada',
      teamId: '',
      branch: 'dev',
      name: 'P',
      tags: ['a'],
      createdAt: T,
      updatedAt: T,
      revision: 0,
    });
  });

  it('counts a project stored before revisions existed as revision 0', () => {
    const legacy = newProjectDocument(owner, '', { name: 'P', tags: [] }, T);
    delete legacy.revision;
    expect(toProject(legacy).revision).toBe(0);
  });
});
