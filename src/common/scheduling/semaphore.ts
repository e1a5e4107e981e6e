/**
 * At most `size` tasks run at once; the others wait their turn, first come first served. Bounds
 * how many connections of the database pool one kind of work may hold, so the rest stay free.
 */
export class Semaphore {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Tasks waiting for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.size) this.running += 1;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    try {
      return await task();
    } finally {
      // The turn passes to the next task waiting, or is given back.
      const next = this.queue.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
