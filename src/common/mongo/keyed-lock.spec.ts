import { KeyedLock } from './keyed-lock';

function tick(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('KeyedLock', () => {
  it('runs tasks with the same key one after another, in order', async () => {
    const lock = new KeyedLock();
    const events: string[] = [];
    const task = (name: string, ms: number) => async () => {
      events.push(`start ${name}`);
      await tick(ms);
      events.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([
      lock.run('a', task('1', 20)),
      lock.run('a', task('2', 1)),
      lock.run('a', task('3', 5)),
    ]);
    expect(results).toEqual(['1', '2', '3']);
    expect(events).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect(lock.busyKeys).toBe(0);
  });

  it('runs different keys in parallel', async () => {
    const lock = new KeyedLock();
    const events: string[] = [];
    // a ends only after b has ended: if b waited for a's key, neither would end.
    let bEnded!: () => void;
    const afterB = new Promise<void>((resolve) => (bEnded = resolve));
    await Promise.all([
      lock.run('a', async () => {
        events.push('start a');
        await afterB;
        events.push('end a');
      }),
      lock.run('b', async () => {
        events.push('start b');
        await tick(1);
        events.push('end b');
        bEnded();
      }),
    ]);
    expect(events).toEqual(['start a', 'start b', 'end b', 'end a']);
  });

  it('releases the key when a task fails', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(lock.run('a', () => Promise.resolve(2))).resolves.toBe(2);
    expect(lock.busyKeys).toBe(0);
  });
});
