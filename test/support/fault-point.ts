/**
 * A fault point: calls of `object[method]` are held until `release()`, either before the real
 * call (`at: 'before'`) or after it, holding its result (`at: 'after'`). `reached` resolves at the
 * first held call; `when` (after only) picks which results hold (the others pass at once);
 * `once` holds only the first call. `restore()` releases and puts the method back.
 */
export function faultPoint<T extends object, K extends keyof T>(
  object: T,
  method: K,
  {
    at,
    when = () => true,
    once = false,
  }: { at: 'before' | 'after'; when?: (result: unknown) => boolean; once?: boolean },
) {
  type Method = T[K] & ((...args: unknown[]) => Promise<unknown>);
  const original = (object[method] as Method).bind(object) as Method;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const hold = async (...args: unknown[]): Promise<unknown> => {
    if (at === 'before') {
      reach();
      await held;
      return original(...args);
    }
    const result = await original(...args);
    if (when(result)) {
      reach();
      await held;
    }
    return result;
  };
  const spy = jest.spyOn(object, method as never) as unknown as jest.SpyInstance;
  if (once) spy.mockImplementationOnce(hold as never);
  else spy.mockImplementation(hold as never);
  return {
    reached,
    release,
    spy,
    restore(): void {
      release();
      spy.mockRestore();
    },
  };
}
