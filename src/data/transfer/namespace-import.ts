import { Inject, Injectable, Logger } from '@nestjs/common';
import type { CustomerPrincipal } from '../../auth';
import type { BodyLine } from '../../common/http/ndjson';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionsService } from '../collections/collections.service';
import { CollectionWriteGate } from '../collections/collection-write.gate';
import { IndexesService } from '../indexes/indexes.service';
import { ItemsRepository } from '../items/items.repository';
import { ItemsService } from '../items/items.service';
import { dataBudget } from '../query/json-guard';
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
import type { ImportDeps, ImportOptions } from './import-context';
import { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import { ItemSchemas } from '../rules/schema/item-schemas';
import { CollectionSchemas } from '../rules/schema/collection-schemas.service';
import { ExpiryService } from '../rules/expiry/expiry.service';
import { ItemReplacements } from './item-replacements';

/** Lines written at once by one import; their results still come in line order. */
const IMPORT_WINDOW = 8;

interface Pending {
  promise: Promise<Outcome>;
  settled: boolean;
}

function settled(outcome: Outcome): Pending {
  return { promise: Promise.resolve(outcome), settled: true };
}

/**
 * POST /import: NDJSON records (transfer-format.ts) into the caller's namespace, each item under
 * the rules of POST /data/{c} (ItemsService.create; upserts ItemReplacements.replace), with a
 * result line per input line, in order. Up to IMPORT_WINDOW lines are written at once; lines
 * naming the same `_id` or the same uniqueField value wait for each other, so the results are
 * what writing them one by one would give. A manifest waits for the lines before it and holds
 * the ones after it until its collections and indexes exist.
 *
 * Input faults are the line's result; the import goes on. It stops — the in-flight lines still
 * report — at a line beyond IMPORT_MAX_LINES, a body past IMPORT_MAX_BYTES or that does not
 * decode, the database failing, the instance shutting down, or the client going away.
 */
@Injectable()
export class NamespaceImport {
  private readonly deps: ImportDeps;
  private readonly maxLines: number;

  constructor(
    collections: CollectionsService,
    creates: ItemsService,
    replacements: ItemReplacements,
    items: ItemsRepository,
    indexes: IndexesService,
    gate: CollectionWriteGate,
    schema: SchemaEnforcement,
    schemas: ItemSchemas,
    collectionSchemas: CollectionSchemas,
    expiry: ExpiryService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const budget = dataBudget({
      dataMaxDepth: config.limits.dataMaxDepth,
      bodyBytes: config.limits.importMaxLineBytes,
    });
    const logger = new Logger('Import');
    this.deps = {
      collections,
      creates,
      replacements,
      items,
      indexes,
      gate,
      schema,
      schemas,
      collectionSchemas,
      expiry,
      budget,
      logger,
    };
    this.maxLines = config.limits.importMaxLines;
  }

  /** The result lines of an import of `body`, then its totals. */
  async *run(
    principal: CustomerPrincipal,
    body: AsyncIterable<BodyLine>,
    options: ImportOptions,
    signal?: AbortSignal,
  ): AsyncGenerator<string> {
    const run = new ImportRun(this.deps, principal, options);
    const input = body[Symbol.asyncIterator]();
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
    let reading: Promise<IteratorResult<BodyLine> | { failed: unknown }> | null = null;
    // Set as soon as a line that stops the import is known (its result may still wait its turn).
    const halted = { now: false };
    let inputDone = false;
    try {
      for (;;) {
        // Results leave in line order, as soon as the line's write is done.
        while (pending[0]?.settled) {
          const { result, stops } = await (pending.shift() as Pending).promise;
          count(totals, result);
          yield JSON.stringify(result);
          if (stops && totals.outcome === 'complete') {
            totals.outcome = 'stopped';
            totals.stoppedAt = result.line;
            totals.code = result.code;
            totals.detail = result.detail;
          }
        }
        if (halted.now || inputDone || pending.length >= IMPORT_WINDOW) {
          if (pending.length === 0) break;
          await (pending[0] as Pending).promise;
          continue;
        }
        if (signal?.aborted) {
          // The instance is shutting down: the lines read are finished, no other is read.
          pending.push(settled(failure(totals.lines + 1, shuttingDown(), true)));
          halted.now = true;
          continue;
        }
        reading ??= input.next().catch((failed: unknown) => ({ failed }));
        const head = pending[0]?.promise;
        const waits: Promise<IteratorResult<BodyLine> | { failed: unknown } | null>[] = [reading];
        if (head) waits.push(head.then(() => null));
        // A wake of this round's own: a race against a promise that outlives the import would
        // keep every round's reaction (and the line it read) until the import ends.
        const abortion = signal ? whenAborted(signal) : null;
        if (abortion) waits.push(abortion.promise);
        const next = await Promise.race(waits);
        abortion?.dispose();
        if (next === null) continue;
        reading = null;
        if ('failed' in next) {
          inputDone = true;
          const outcome = bodyFailure(totals.lines + 1, next.failed);
          if (outcome) pending.push(settled(outcome));
          else totals.outcome = 'stopped';
          halted.now = true;
          continue;
        }
        if (next.done) {
          inputDone = true;
          continue;
        }
        totals.lines += 1;
        const line = totals.lines;
        if (line > this.maxLines) {
          pending.push(settled(failure(line, tooManyLines(this.maxLines), true)));
          halted.now = true;
          continue;
        }
        const started = run.start(line, next.value);
        // A barrier (a manifest, a collection's first line) starts once the lines before it are
        // done, and the lines after it wait for it.
        if (started.barrier) {
          await Promise.all(pending.map((p) => p.promise));
          pending.push(track(started.run(), halted));
          await (pending.at(-1) as Pending).promise;
        } else pending.push(track(started.run(), halted));
      }
    } finally {
      // Stops reading the body (an import that stopped, or a client that went away). A read
      // still waiting for the client ends when the connection does (the controller closes it).
      const stopping = input.return?.(undefined).catch(() => undefined);
      if (reading === null) await stopping;
    }
    yield JSON.stringify(totals);
  }
}

/**
 * A line's work under way: `settled` marks it done for the ordered output, and a line that stops
 * the import halts the reading at once.
 */
function track(promise: Promise<Outcome>, halted: { now: boolean }): Pending {
  const pending: Pending = { promise, settled: false };
  void promise.then(({ stops }) => {
    pending.settled = true;
    if (stops) halted.now = true;
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
