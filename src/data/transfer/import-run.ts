import { Logger } from '@nestjs/common';
import type { CustomerPrincipal } from '../../auth';
import { DomainError, ValidationFailedError } from '../../common/errors';
import type { BodyLine } from '../../common/http/ndjson';
import type { NewItemRequest } from '../query/data-requests';
import { isPlainObject, type JsonBudget } from '../../common/json';
import type { BatchItemResult } from './import-batches';
import type { ImportDryRun } from './import-dry-run';
import type { ImportItemWrites } from './import-item-writes';
import {
  BatchedLines,
  type BatchOfLines,
  type ItemLine,
  type LineWork,
} from './import-batch-lines';

type ItemAt = BatchOfLines['lines'][number];
import {
  endMismatch,
  isSectionLine,
  parseRecord,
  toImportedItemRequest,
  type CollectionSettings,
  type ImportRecord,
} from './import-records';
import {
  failure,
  lineFailure,
  lineTooLong,
  ok,
  one,
  withWarnings,
  type Outcome,
} from './import-results';
import { LineHolds } from './line-holds';
import { RecordDigest } from './transfer-format';
import type { ManifestCollections } from './manifest-collections';
import type { ImportOptions } from './import-options';
import type { ImportFiles } from './import-files';

const done = (outcome: Outcome): LineWork => ({
  barrier: false,
  lines: 1,
  run: () => Promise.resolve([outcome]),
});

/** One import's state: the settings its manifests gave, its digest, the lines in flight. */
export class ImportRun {
  private readonly settings = new Map<string, CollectionSettings>();
  private readonly digest = new RecordDigest();
  private readonly holds = new LineHolds();
  /** Collections the lines read so far name. */
  private readonly seen = new Set<string>();
  private readonly batched = new BatchedLines(this.holds, (batch) => this.batch(batch));
  private readonly logger = new Logger('Import');

  /**
   * `writes` writes the item lines, `made` a manifest's collections, `files` the file lines;
   * `dry` answers what the item lines would do instead (a dry run: `options.dryRun`). Item lines
   * are read within `budget`.
   */
  constructor(
    private readonly principal: CustomerPrincipal,
    private readonly options: ImportOptions,
    private readonly writes: ImportItemWrites,
    private readonly made: ManifestCollections,
    private readonly files: ImportFiles,
    private readonly dry: ImportDryRun | null,
    private readonly budget: JsonBudget,
  ) {}

  /**
   * Reads a line in input order (its record, the digest, the values it holds) and answers the
   * work it completes, in line order: none while the line waits in a batch, the open batch first
   * when the line cannot join it. A manifest runs once the lines before it are done.
   */
  start(line: number, input: BodyLine): LineWork[] {
    if ('tooLong' in input) {
      this.files.interrupt();
      this.digest.add('');
      return [...this.batched.flush(), done(failure(line, lineTooLong(input.tooLong)))];
    }
    let record: ImportRecord;
    try {
      record = parseRecord(input.bytes, input.text);
    } catch (error) {
      this.files.interrupt();
      // A refused manifest or end still ends the lines an end record digests.
      if (isSectionLine(input.text)) this.digest.end();
      else this.digest.add(input.bytes);
      if (error instanceof DomainError)
        return [...this.batched.flush(), done(failure(line, error))];
      throw error;
    }
    // Any line but a file's own ends a file whose bytes have not all come.
    if (record.type !== 'file' && record.type !== 'file-chunk') this.files.interrupt();
    switch (record.type) {
      case 'file':
      case 'file-chunk':
        this.digest[record.type === 'file' ? 'addFile' : 'add'](input.bytes);
        return [...this.batched.flush(), this.files.take(line, record)];
      case 'manifest': {
        this.digest.end();
        const run = () => this.guarded(line, () => this.manifest(line, record)).then(one);
        return [...this.batched.flush(), { barrier: true, lines: 1, run }];
      }
      case 'end': {
        const outcome = this.end(line, record);
        if (!this.made.rules.waiting || outcome.result.status >= 400)
          return [...this.batched.flush(), done(outcome)];
        // The manifest's rules, after its items (ManifestRules).
        const run = () =>
          this.guarded(line, () => this.made.rules.apply().then(() => outcome)).then(one);
        return [...this.batched.flush(), { barrier: true, lines: 1, run }];
      }
      case 'item': {
        this.digest.add(input.bytes);
        // A collection's first line may create it: collections are created in line order, so
        // which line meets a full quota is the same on every run.
        const first = !this.seen.has(record.collection);
        this.seen.add(record.collection);
        const values = this.valuesOf(record);
        if (!first && this.batches(record.collection))
          return this.batched.join(line, record, values, input.bytes.length);
        const works = this.batched.flush();
        const { wait, release } = this.holds.hold(values);
        const run = () => wait.then(() => this.alone(line, record).then(one)).finally(release);
        works.push({ barrier: first, lines: 1, run });
        return works;
      }
    }
  }

  /**
   * Whether a collection's item lines are written in batches: not in a dry run, and not with a
   * uniqueField, whose values are claimed one by one (ItemsService.create).
   */
  private batches(collection: string): boolean {
    const { uniqueField } = this.settingsOf(collection);
    return this.dry === null && (uniqueField === null || uniqueField === '_id');
  }

  /** Whether item lines wait in a batch (BatchedLines.flush starts them). */
  get batching(): boolean {
    return this.batched.waiting;
  }

  /** Starts the lines waiting in a batch (the input pauses or ends). */
  flush(): LineWork[] {
    return this.batched.flush();
  }

  /** Writes a batch's items together; those a unique index refused are written alone. */
  private async batch({ collection, lines }: BatchOfLines): Promise<Outcome[]> {
    const log = this.logOnce();
    const requests = lines.map(({ line, record }): NewItemRequest | Outcome => {
      try {
        return this.requestOf(record);
      } catch (error) {
        return lineFailure(line, error, log);
      }
    });
    const items = requests.filter((r): r is NewItemRequest => !('result' in r));
    let results: BatchItemResult[] = [];
    try {
      if (items.length > 0)
        results = await this.writes.batch(
          this.principal,
          collection,
          items,
          this.options.mode === 'upsert',
        );
    } catch (error) {
      // Nothing is known of each item: every line of the batch has the failure (logged once).
      return requests.map((r, i) =>
        'result' in r ? r : lineFailure((lines[i] as ItemAt).line, error, log),
      );
    }
    const outcomes: Outcome[] = [];
    let next = 0;
    for (const [i, request] of requests.entries()) {
      const { line, record } = lines[i] as ItemAt;
      const result = 'result' in request ? null : (results[next++] as BatchItemResult);
      if (result === null) outcomes.push(request as Outcome);
      else if ('refused' in result) outcomes.push(failure(line, result.refused));
      else if ('alone' in result)
        outcomes.push(await this.alone(line, record, request as NewItemRequest));
      else outcomes.push(withWarnings(ok(line, 201, result.created), result.warnings));
    }
    return outcomes;
  }

  /** The values the item holds while it is in flight: its `_id` and its uniqueField value. */
  private valuesOf(record: ItemLine): unknown[] {
    const item = isPlainObject(record.item) ? record.item : {};
    const values: unknown[] = [];
    if (typeof item._id === 'string') values.push([record.collection, '_id', item._id]);
    const { uniqueField } = this.settingsOf(record.collection);
    if (uniqueField !== null && Object.hasOwn(item, uniqueField))
      values.push([record.collection, uniqueField, item[uniqueField]]);
    return values;
  }

  private settingsOf(collection: string): CollectionSettings {
    return this.settings.get(collection) ?? this.options.settings;
  }

  /** Runs a line's work: rule refusals are its result; the database failing stops the import. */
  private async guarded(line: number, work: () => Promise<Outcome>): Promise<Outcome> {
    try {
      return await work();
    } catch (error) {
      return lineFailure(line, error, this.logOnce());
    }
  }

  /** Logs an unexpected failure of a line, once for the lines that share it. */
  private logOnce(): (error: unknown) => void {
    let logged = false;
    return (error) => {
      if (!logged) this.logger.error({ err: error }, 'import line failed');
      logged = true;
    };
  }

  /** An item line's request: refused (its result) when it does not hold a valid item. */
  private requestOf(record: ItemLine): NewItemRequest {
    const { branch } = this.principal;
    if (record.branch !== undefined && record.branch !== branch)
      throw new ValidationFailedError([
        { field: 'branch', message: `is not the request's branch ('${branch}')` },
      ]);
    return toImportedItemRequest(record.item, this.settingsOf(record.collection), this.budget);
  }

  /** Writes one item line by itself (its request, when a batch made it already). */
  private alone(line: number, record: ItemLine, request?: NewItemRequest): Promise<Outcome> {
    return this.guarded(line, () =>
      this.item(line, record.collection, request ?? this.requestOf(record)),
    );
  }

  /** Writes one item of collection `name`: its outcome, with the warnings it was written with. */
  private async item(line: number, name: string, request: NewItemRequest): Promise<Outcome> {
    if (this.dry) return this.dry.item(this.principal, line, name, request);
    const { id, replaced, warnings } = await this.writes.one(
      this.principal,
      name,
      request,
      this.options.mode === 'upsert',
    );
    return withWarnings(ok(line, replaced ? 200 : 201, id), warnings);
  }

  /**
   * A manifest: its settings apply to the lines after it; its collections and indexes are
   * created (a dry run checks the quota only). The first refusal is the line's result; the
   * other collections are still made.
   */
  private async manifest(
    line: number,
    record: Extract<ImportRecord, { type: 'manifest' }>,
  ): Promise<Outcome> {
    for (const collection of record.collections) {
      this.settings.set(collection.name, { ...this.options.settings, ...collection.settings });
      this.seen.add(collection.name);
    }
    let refusal: DomainError | null = null;
    for (const collection of record.collections) {
      try {
        await this.made.create(collection);
      } catch (error) {
        if (!(error instanceof DomainError) || error.status >= 500) throw error;
        refusal ??= new DomainError(
          error.entry,
          `Collection '${collection.name}': ${error.message}`,
          error.errors,
          error.extensions,
        );
      }
    }
    return refusal ? failure(line, refusal) : ok(line, 200);
  }

  /** An end record: does it count and digest the lines since the manifest? */
  private end(line: number, record: Extract<ImportRecord, { type: 'end' }>): Outcome {
    const mismatch = endMismatch(this.digest.end(true), record);
    return mismatch ? failure(line, mismatch) : ok(line, 200);
  }

  /** Ends the import's files: resolves how many were left incomplete (ImportFiles). */
  finishFiles(): Promise<number> {
    return this.files.finish();
  }
}
