import { BoundedLabel } from './bounded-label';

describe('BoundedLabel', () => {
  it('keeps the first distinct values and reports any later one as other', () => {
    const label = new BoundedLabel(2);
    expect(['find', 'insert', 'find', 'update', 'drop', 'insert'].map((v) => label.of(v))).toEqual([
      'find',
      'insert',
      'find',
      'other',
      'other',
      'insert',
    ]);
  });
});
