/**
 * Values held by the lines of an import in flight (an item's `_id`, its uniqueField value): a
 * line waits for the lines before it that hold any of its values, so that lines written at once
 * give the results writing them one by one would.
 */
export class LineHolds {
  /** The last line holding each value, while it is in flight. */
  private readonly holders = new Map<string, Promise<void>>();

  /**
   * Holds `values` (each a JSON-serialisable key) until `release`; `wait` settles when the
   * lines before that hold any of them are done.
   */
  hold(values: readonly unknown[]): { wait: Promise<unknown>; release: () => void } {
    const keys = values.map((value) => JSON.stringify(value));
    const before = keys
      .map((key) => this.holders.get(key))
      .filter((held): held is Promise<void> => held !== undefined);
    let finish = (): void => undefined;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    for (const key of keys) this.holders.set(key, finished);
    return {
      wait: Promise.all(before),
      release: () => {
        finish();
        for (const key of keys) if (this.holders.get(key) === finished) this.holders.delete(key);
      },
    };
  }
}
