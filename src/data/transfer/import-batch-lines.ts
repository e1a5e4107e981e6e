import type { LineHolds } from './line-holds';
import type { ImportRecord } from './import-records';
import type { Outcome } from './import-results';

export type ItemLine = Extract<ImportRecord, { type: 'item' }>;

/** Item lines written together at most: bounded in count and in their bytes. */
export const IMPORT_BATCH_LINES = 100;
export const IMPORT_BATCH_BYTES = 1024 * 1024;

/** The work of one or more lines, their outcomes in line order. */
export interface LineWork {
  /** It starts once the work before it is done, and the work after it waits for it. */
  barrier: boolean;
  /** How many lines it answers. */
  lines: number;
  run: () => Promise<Outcome[]>;
}

/** Item lines read and not started yet, to be written together (ImportBatches). */
export interface BatchOfLines {
  collection: string;
  lines: { line: number; record: ItemLine }[];
  /** The values its lines hold (LineHolds), and their keys. */
  values: unknown[];
  keys: Set<string>;
  bytes: number;
}

/**
 * Item lines of one collection gathered to be written together: a line joins the open batch
 * unless it is of another collection or holds a value a line of the batch holds.
 */
export class BatchedLines {
  private open: BatchOfLines | null = null;

  constructor(
    private readonly holds: LineHolds,
    private readonly write: (batch: BatchOfLines) => Promise<Outcome[]>,
  ) {}

  get waiting(): boolean {
    return this.open !== null;
  }

  /**
   * Starts the lines waiting in a batch: when a line cannot join them, when the batch is full
   * and when the input pauses (the client may wait for their results before it sends more).
   */
  flush(): LineWork[] {
    const batch = this.open;
    if (batch === null) return [];
    this.open = null;
    const { wait, release } = this.holds.hold(batch.values);
    const run = () => wait.then(() => this.write(batch)).finally(release);
    return [{ barrier: false, lines: batch.lines.length, run }];
  }

  /** Adds an item line to the open batch, after starting it when the line cannot join it. */
  join(line: number, record: ItemLine, values: unknown[], bytes: number): LineWork[] {
    const keys = values.map((value) => JSON.stringify(value));
    const open = this.open;
    // Lines holding one value are written one after the other, as their order says.
    const joins =
      open !== null &&
      open.collection === record.collection &&
      !keys.some((key) => open.keys.has(key));
    const works = joins ? [] : this.flush();
    const batch = (this.open ??= {
      collection: record.collection,
      lines: [],
      values: [],
      keys: new Set(),
      bytes: 0,
    });
    batch.lines.push({ line, record });
    batch.values.push(...values);
    for (const key of keys) batch.keys.add(key);
    batch.bytes += bytes;
    if (batch.lines.length >= IMPORT_BATCH_LINES || batch.bytes >= IMPORT_BATCH_BYTES)
      works.push(...this.flush());
    return works;
  }
}
