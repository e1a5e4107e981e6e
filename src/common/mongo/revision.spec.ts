import { atRevision } from './revision';

describe('atRevision', () => {
  it('matches one revision by equality', () => {
    expect(atRevision('revision', [3])).toEqual({ revision: 3 });
  });

  it('counts a missing counter as revision 0', () => {
    expect(atRevision('revision', [0])).toEqual({ revision: { $in: [0, null] } });
    expect(atRevision('_rev.n', [2, 0])).toEqual({ '_rev.n': { $in: [2, 0, null] } });
  });

  it('accepts any of several revisions', () => {
    expect(atRevision('revision', [1, 4])).toEqual({ revision: { $in: [1, 4] } });
  });
});
