import { imageBefore, priorOf } from './item-images';

const open = { _id: 'i1', status: 'open', total: 1 };

describe('item images', () => {
  it('keeps the changed fields of an update and gives the item before back', () => {
    const before = { _id: 'i1', status: 'open', gone: 1, same: { a: [1] } };
    const after = { _id: 'i1', status: 'closed', added: true, same: { a: [1] } };
    const prior = priorOf(before, after);
    expect(prior).toEqual({ fields: { status: 'open', gone: 1 }, missing: ['added'] });
    expect(imageBefore(after, prior!)).toEqual(before);
  });

  it('keeps the whole item of a deletion and nothing of a creation', () => {
    expect(priorOf(open, null)).toEqual({ fields: open });
    expect(imageBefore(null, { fields: open })).toEqual(open);
    expect(priorOf(null, open)).toBeUndefined();
  });
});
