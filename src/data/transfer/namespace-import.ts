import { Inject, Injectable } from '@nestjs/common';
import { tenantOf, type CustomerPrincipal } from '../../auth';
import type { DomainError } from '../../common/errors';
import type { BodyLine } from '../../common/http/ndjson';
import { APP_CONFIG, type AppConfig } from '../../config';
import { FileRestores, FilesService } from '../../files';
import { CollectionsService } from '../collections/collections.service';
import { IndexesService } from '../indexes/indexes.service';
import { ItemsRepository } from '../items/items.repository';
import { ItemsService } from '../items/items.service';
import { dataBudget } from '../query/json-guard';
import type { JsonBudget } from '../../common/json';
import {
  bodyFailure,
  count,
  failure,
  shuttingDown,
  tooManyLines,
  type ImportTotals,
  type Outcome,
} from './import-results';
import { ImportRun } from './import-run';
import { IMPORT_BATCH_LINES, type LineWork } from './import-batch-lines';
import { ImportBatches } from './import-batches';
import type { ImportOptions } from './import-options';
import { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import { ItemSchemas } from '../rules/schema/item-schemas';
import { CollectionSchemas } from '../rules/schema/collection-schemas.service';
import { ExpiryService } from '../rules/expiry/expiry.service';
import { ItemReplacements } from './item-replacements';
import { ImportDryRun } from './import-dry-run';
import { ImportFiles } from './import-files';
import { ImportItemWrites } from './import-item-writes';
import { ManifestCollections } from './manifest-collections';
import { ManifestRules } from './manifest-rules';
import { AccessRulesService } from '../access/access.service';
import { SearchService } from '../search/search.service';
import { limitRefusal, TenantLimits } from '../../plans';
import { ImportTooLargeError } from '../data.errors';

/**
 * Writes under way at once in one import (a line, or a batch of item lines), and the lines they
 * hold at most: two batches, whose items then live briefly enough to die young (a long-lived
 * item is promoted out of V8's young generation and waits for a full collection). Their results
 * still come in line order.
 */
const IMPORT_WINDOW = 8;
const IMPORT_WINDOW_LINES = 2 * IMPORT_BATCH_LINES;

/** Work under way (a line, or a batch of them), its outcomes in line order. */
interface Pending {
  promise: Promise<Outcome[]>;
  lines: number;
  settled: boolean;
}

function settled(outcome: Outcome): Pending {
  return { promise: Promise.resolve([outcome]), lines: 1, settled: true };
}

/** An import body's size limit for one caller (NamespaceImport.bodyLimit). */
export interface ImportBodyLimit {
  max: number | null;
  /** The refusal of a body of `bytes`, past `max`. */
  exceeded(bytes: number): DomainError;
}

/** An import's body: its lines as they arrive, read within `limit`. */
export interface ImportBody {
  lines: AsyncIterable<BodyLine[]>;
  limit: ImportBodyLimit;
}

/** What a line taken from the body's lines leaves in their place. */
const EMPTY_LINE: BodyLine = { tooLong: 0 };

/** What a read waits against when lines wait in a batch: the input pausing (nothing buffered). */
const PAUSE = Symbol('pause');
const nextTurn = () => new Promise<typeof PAUSE>((resolve) => setImmediate(resolve, PAUSE));

/**
 * POST /import: NDJSON records (transfer-format.ts) into the caller's namespace, each item under
 * the rules of POST /data/{c}, with a result line per input line, in order. Consecutive item
 * lines of one collection are written together (ImportBatches: one intent, ordered inserts and
 * one append of events per batch of up to IMPORT_BATCH_LINES lines or IMPORT_BATCH_BYTES); a
 * batch starts when it is full, when a line cannot join it, and as soon as the input has no
 * further line at hand, so a client that waits for results before it sends more gets them.
 * Lines of collections with a uniqueField, lines of a dry run and a collection's first line are
 * written one by one (ItemsService.create; upserts ItemReplacements.replace). Up to
 * IMPORT_WINDOW writes are under way at once; lines naming the same `_id` or the same
 * uniqueField value wait for each other, so the results are what writing them one by one would
 * give. A manifest waits for the lines before it and holds the ones after it until its
 * collections and indexes exist.
 *
 * Input faults are the line's result; the import goes on. It stops — the writes under way still
 * report — at a line beyond IMPORT_MAX_LINES, a body past the tenant's `importBytes` or that does not
 * decode, the database failing, the instance shutting down, or the client going away.
 */
@Injectable()
export class NamespaceImport {
  private readonly writes: ImportItemWrites;
  /** What an item line may hold: the data depth, an import line's bytes. */
  private readonly budget: JsonBudget;
  private readonly maxLines: number;
  private readonly fileMaxBytes: number;
  private readonly maxWords: number;
  private readonly searchMaxFields: number;

  constructor(
    private readonly collections: CollectionsService,
    creates: ItemsService,
    batches: ImportBatches,
    replacements: ItemReplacements,
    private readonly items: ItemsRepository,
    private readonly indexes: IndexesService,
    private readonly schema: SchemaEnforcement,
    private readonly schemas: ItemSchemas,
    private readonly collectionSchemas: CollectionSchemas,
    private readonly expiry: ExpiryService,
    private readonly access: AccessRulesService,
    private readonly search: SearchService,
    private readonly restores: FileRestores,
    private readonly files: FilesService,
    private readonly limits: TenantLimits,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.writes = new ImportItemWrites(collections, creates, replacements, batches);
    this.budget = dataBudget({
      dataMaxDepth: config.limits.dataMaxDepth,
      bodyBytes: config.limits.importMaxLineBytes,
    });
    this.maxLines = config.limits.importMaxLines;
    this.fileMaxBytes = config.files.maxBytes;
    this.maxWords = config.limits.searchMaxWordsPerItem;
    this.searchMaxFields = config.limits.searchMaxFields;
  }

  /** One import's run: its line rules, with the parts that write its manifests and files. */
  private runOf(principal: CustomerPrincipal, options: ImportOptions): ImportRun {
    const { collections, schemas, collectionSchemas, expiry, access, search, searchMaxFields } =
      this;
    const dry = options.dryRun
      ? new ImportDryRun(
          collections,
          this.items,
          this.schema,
          principal,
          options.mode,
          this.maxWords,
        )
      : null;
    const rules = new ManifestRules(
      { collections, schemas, collectionSchemas, expiry, access, search, searchMaxFields },
      principal,
    );
    const made = new ManifestCollections(collections, this.indexes, rules, principal, dry);
    const files = new ImportFiles(this.restores, this.files, this.fileMaxBytes, principal, options);
    return new ImportRun(principal, options, this.writes, made, files, dry, this.budget);
  }

  /**
   * How many bytes the caller's import body may have: its tenant's `importBytes` (its plan's,
   * else IMPORT_MAX_BYTES; null: no limit), and the refusal of a body past it — before the body
   * is read when its Content-Length says so, as the result line where reading stopped otherwise.
   */
  async bodyLimit(principal: CustomerPrincipal): Promise<ImportBodyLimit> {
    const active = await this.limits.of(tenantOf(principal));
    const max = active.limits.importBytes;
    return {
      max,
      exceeded: (bytes) =>
        limitRefusal(
          active,
          { limit: 'importBytes', max: max ?? Infinity, usage: bytes },
          (members) => new ImportTooLargeError(members),
        ),
    };
  }

  /** The result lines of an import of `body` (those ready together joined by `\n`), then its totals. */
  async *run(
    principal: CustomerPrincipal,
    body: ImportBody,
    options: ImportOptions,
    signal?: AbortSignal,
  ): AsyncGenerator<string> {
    const run = this.runOf(principal, options);
    const input = body.lines[Symbol.asyncIterator]();
    const pending: Pending[] = [];
    const totals: ImportTotals = {
      type: 'totals',
      outcome: 'complete',
      dryRun: options.dryRun,
      lines: 0,
      created: 0,
      replaced: 0,
      failed: 0,
    };
    let reading: Promise<IteratorResult<BodyLine[]> | { failed: unknown }> | null = null;
    // The lines the body has given and the import has not taken yet (readBodyLines' groups).
    let buffered: BodyLine[] = [];
    let taken = 0;
    // Set as soon as a line that stops the import is known (its result may still wait its turn).
    const halted = { now: false };
    let inputDone = false;
    // Starts work in line order: a barrier once the work before it is done.
    const begin = async (works: LineWork[]): Promise<void> => {
      for (const work of works) {
        if (work.barrier) {
          await Promise.all(pending.map((p) => p.promise));
          pending.push(track(work, halted));
          await (pending.at(-1) as Pending).promise;
        } else pending.push(track(work, halted));
      }
    };
    try {
      for (;;) {
        // Results leave in line order, as soon as the line's write is done: those ready
        // together (a batch's) in one write.
        const ready: string[] = [];
        while (pending[0]?.settled) {
          for (const { result, stops } of await (pending.shift() as Pending).promise) {
            count(totals, result);
            ready.push(JSON.stringify(result));
            if (stops && totals.outcome === 'complete') {
              totals.outcome = 'stopped';
              totals.stoppedAt = result.line;
              totals.code = result.code;
              totals.detail = result.detail;
            }
          }
        }
        if (ready.length > 0) yield ready.join('\n');
        const exhausted = inputDone && taken === buffered.length;
        // No line follows: the lines waiting in a batch start.
        if ((halted.now || exhausted) && run.batching) {
          await begin(run.flush());
          continue;
        }
        const inFlight = pending.reduce((lines, p) => lines + p.lines, 0);
        const full = pending.length >= IMPORT_WINDOW || inFlight >= IMPORT_WINDOW_LINES;
        if (halted.now || exhausted || full) {
          if (pending.length === 0) break;
          await (pending[0] as Pending).promise;
          continue;
        }
        if (signal?.aborted) {
          // The instance is shutting down: the lines read are finished, no other is read.
          await begin(run.flush());
          pending.push(settled(failure(totals.lines + 1, shuttingDown(), true)));
          halted.now = true;
          continue;
        }
        if (taken === buffered.length) {
          // Nothing at hand: the next lines of the body, or a wake.
          reading ??= input.next().catch((failed: unknown) => ({ failed }));
          const head = pending[0]?.promise;
          const waits: Promise<
            IteratorResult<BodyLine[]> | { failed: unknown } | null | typeof PAUSE
          >[] = [reading];
          if (head) waits.push(head.then(() => null));
          // Lines wait in a batch: it starts when the input has no further line at hand.
          if (run.batching) waits.push(nextTurn());
          // A wake of this round's own: a race against a promise that outlives the import would
          // keep every round's reaction (and the lines it read) until the import ends.
          const abortion = signal ? whenAborted(signal) : null;
          if (abortion) waits.push(abortion.promise);
          const next = await Promise.race(waits);
          abortion?.dispose();
          if (next === PAUSE) {
            await begin(run.flush());
            continue;
          }
          if (next === null) continue;
          reading = null;
          if ('failed' in next) {
            inputDone = true;
            await begin(run.flush());
            const outcome = bodyFailure(totals.lines + 1, next.failed, body.limit);
            if (outcome) pending.push(settled(outcome));
            else totals.outcome = 'stopped';
            halted.now = true;
            continue;
          }
          if (next.done) inputDone = true;
          else [buffered, taken] = [next.value, 0];
          continue;
        }
        // A line at hand: taken without a wait.
        const taking = buffered[taken] as BodyLine;
        buffered[taken++] = EMPTY_LINE; // let go of it once its work does
        totals.lines += 1;
        const line = totals.lines;
        if (line > this.maxLines) {
          await begin(run.flush());
          pending.push(settled(failure(line, tooManyLines(this.maxLines), true)));
          halted.now = true;
          continue;
        }
        await begin(run.start(line, taking));
      }
    } finally {
      // Stops reading the body (an import that stopped, or a client that went away). A read
      // still waiting for the client ends when the connection does (the controller closes it).
      const stopping = input.return?.(undefined).catch(() => undefined);
      if (reading === null) await stopping;
      // A file whose bytes did not all come is given up: nothing of it stays.
      const incomplete = await run.finishFiles();
      if (incomplete > 0) totals.incompleteFiles = incomplete;
    }
    yield JSON.stringify(totals);
  }
}

/**
 * A line's work under way: `settled` marks it done for the ordered output, and a line that stops
 * the import halts the reading at once.
 */
function track(work: LineWork, halted: { now: boolean }): Pending {
  const promise = work.run();
  const pending: Pending = { promise, lines: work.lines, settled: false };
  void promise.then((outcomes) => {
    pending.settled = true;
    if (outcomes.some(({ stops }) => stops)) halted.now = true;
  });
  return pending;
}

/** Settles (null) when `signal` aborts; `dispose` stops listening (the promise is then let go). */
function whenAborted(signal: AbortSignal): { promise: Promise<null>; dispose: () => void } {
  let listener = (): void => undefined;
  const promise = new Promise<null>((resolve) => {
    listener = () => resolve(null);
    if (signal.aborted) resolve(null);
    else signal.addEventListener('abort', listener, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', listener) };
}
