import { HeapGrowthBound } from './heap-growth';

describe('HeapGrowthBound', () => {
  function bound(percent: number) {
    const flags: number[] = [];
    let collections = 0;
    const heap = new HeapGrowthBound(
      (value) => flags.push(value),
      () => collections++,
    );
    heap.configure(percent);
    return { heap, flags, collections: () => collections };
  }

  it('bounds the growth from the first hold to the last release, with one full collection', () => {
    const { heap, flags, collections } = bound(20);
    const first = heap.hold();
    const second = heap.hold();
    expect(flags).toEqual([20]);
    expect(collections()).toBe(1);
    first();
    first();
    expect(flags).toEqual([20]);
    second();
    expect(flags).toEqual([20, 0]);
    heap.hold();
    expect(flags).toEqual([20, 0, 20]);
    expect(collections()).toBe(2);
  });

  it('never bounds with 0', () => {
    const { heap, flags, collections } = bound(0);
    heap.hold()();
    expect(flags).toEqual([]);
    expect(collections()).toBe(0);
  });
});
