/**
 * The values of one label, capped: the first `max` distinct values are kept, any later one is
 * reported as `overflow`. For labels whose values the service does not fully choose (database
 * command names come from the driver), so that no input can grow the number of series.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly overflow = 'other',
  ) {}

  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return this.overflow;
    this.seen.add(value);
    return value;
  }
}
