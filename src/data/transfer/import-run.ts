import { ownerValueOf, type CustomerPrincipal } from '../../auth';
import {
  DatabaseUnavailableError,
  DomainError,
  ForbiddenError,
  isDatabaseUnavailable,
  ValidationFailedError,
} from '../../common/errors';
import type { BodyLine } from '../../common/http/ndjson';
import { CollectionQuotaExceededError, DuplicateItemError } from '../data.errors';
import { uniqueValueOf } from '../items/items.service';
import { ownerScopeOf } from '../items/item-scope';
import type { NewItemRequest } from '../query/data-requests';
import { isPlainObject } from '../query/json-guard';
import {
  DigestMismatchError,
  isSectionLine,
  parseRecord,
  toImportedItemRequest,
  type CollectionSettings,
  type ImportCollection,
  type ImportRecord,
} from './import-records';
import { failure, lineTooLong, ok, type Outcome } from './import-results';
import { LineHolds } from './line-holds';
import { RecordDigest } from './transfer-format';
import { ManifestRules } from './manifest-rules';
import type { ImportDeps, ImportOptions } from './import-context';
import { collectWarnings } from '../rules/schema/schema-warnings';

type ItemLine = Extract<ImportRecord, { type: 'item' }>;

/** One import's state: the settings its manifests gave, its digest, the lines in flight. */
export class ImportRun {
  private readonly settings = new Map<string, CollectionSettings>();
  private readonly digest = new RecordDigest();
  private readonly holds = new LineHolds();
  /** Collections the lines read so far name. */
  private readonly seen = new Set<string>();
  /** Collections a dry run would have created (they count against the quota). */
  private readonly wouldCreate = new Set<string>();
  private readonly rules: ManifestRules;

  constructor(
    private readonly deps: ImportDeps,
    private readonly principal: CustomerPrincipal,
    private readonly options: ImportOptions,
  ) {
    this.rules = new ManifestRules(deps, principal);
  }

  /**
   * Reads a line in input order (its record, the digest, the values it holds) and returns its
   * work, to run now or, for a manifest, once the lines before it are done.
   */
  start(line: number, input: BodyLine): { barrier: boolean; run: () => Promise<Outcome> } {
    const now = (outcome: Outcome) => ({ barrier: false, run: () => Promise.resolve(outcome) });
    if ('tooLong' in input) {
      this.digest.add('');
      return now(failure(line, lineTooLong(input.tooLong)));
    }
    let record: ImportRecord;
    try {
      record = parseRecord(input.bytes, input.text);
    } catch (error) {
      // A refused manifest or end still ends the lines an end record digests.
      if (isSectionLine(input.text)) this.digest.end();
      else this.digest.add(input.bytes);
      if (error instanceof DomainError) return now(failure(line, error));
      throw error;
    }
    switch (record.type) {
      case 'manifest':
        this.digest.end();
        return { barrier: true, run: () => this.guarded(line, () => this.manifest(line, record)) };
      case 'end': {
        const outcome = this.end(line, record);
        if (!this.rules.waiting || outcome.result.status >= 400) return now(outcome);
        // The manifest's rules, after its items (ManifestRules).
        const run = () => this.guarded(line, () => this.rules.apply().then(() => outcome));
        return { barrier: true, run };
      }
      case 'item': {
        this.digest.add(input.bytes);
        // A collection's first line may create it: collections are created in line order, so
        // which line meets a full quota is the same on every run.
        const first = !this.seen.has(record.collection);
        this.seen.add(record.collection);
        const { wait, release } = this.holds.hold(this.valuesOf(record));
        const run = async () => {
          try {
            await wait;
            const { value, warnings } = await collectWarnings(() =>
              this.guarded(line, () => this.item(line, record)),
            );
            if (warnings.length > 0) value.result.warnings = warnings; // a schema that warns
            return value;
          } finally {
            release();
          }
        };
        return { barrier: first, run };
      }
    }
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
      if (error instanceof DatabaseUnavailableError || isDatabaseUnavailable(error))
        return failure(line, new DatabaseUnavailableError(), true);
      if (error instanceof DomainError) return failure(line, error, error.status >= 500);
      this.deps.logger.error({ err: error, line }, 'import line failed');
      return failure(
        line,
        new DomainError('INTERNAL_ERROR', 'The line could not be written.'),
        true,
      );
    }
  }

  private async item(line: number, record: ItemLine): Promise<Outcome> {
    const { principal } = this;
    if (record.branch !== undefined && record.branch !== principal.branch)
      throw new ValidationFailedError([
        { field: 'branch', message: `is not the request's branch ('${principal.branch}')` },
      ]);
    const request = toImportedItemRequest(
      record.item,
      this.settingsOf(record.collection),
      this.deps.budget,
    );
    if (this.options.dryRun) return this.dryItem(line, record.collection, request);
    const { gate, replacements, creates } = this.deps;
    return gate.around(principal, record.collection, async () => {
      if (this.options.mode === 'upsert' && request.id !== null) {
        const replaced = await replacements.replace(principal, record.collection, {
          ...request,
          id: request.id,
        });
        if (replaced) return ok(line, 200, replaced._id);
      }
      const created = await creates.create(principal, record.collection, request);
      return ok(line, 201, created._id);
    });
  }

  /** What writing the item would answer, from the stored data (not from earlier lines). */
  private async dryItem(
    line: number,
    collection: string,
    request: NewItemRequest,
  ): Promise<Outcome> {
    const { collections, items } = this.deps;
    const { principal } = this;
    const { item, ownerField, uniqueField, id } = request;
    if (principal.kind === 'sub') item[ownerField] = ownerValueOf(principal);
    const unique = uniqueField === null ? null : uniqueValueOf(item, id ?? '', uniqueField);
    const target = await collections.find(principal, collection);
    if (!target) {
      await this.wouldCreateCollection(collection);
      return ok(line, 201, id ?? undefined);
    }
    this.deps.schema.enforce(target, item, ownerField);
    const scope = ownerScopeOf(principal, ownerField);
    let replaces = false;
    if (id !== null && (await items.existsById(target, id))) {
      const inScope =
        scope === null ||
        (
          await items.findMatching(
            target,
            { scope, conditions: [{ kind: 'eq', path: '_id', anyOf: [id] }] },
            1,
          )
        ).length > 0;
      if (this.options.mode === 'insert' || !inScope) throw DuplicateItemError.taken('_id', id);
      replaces = true;
    }
    if (uniqueField !== null && unique !== null && uniqueField !== '_id') {
      const holder = await items.findIdByValue(target, scope, uniqueField, unique);
      if (holder !== null && holder !== id) throw DuplicateItemError.taken(uniqueField, holder);
    }
    return ok(line, replaces ? 200 : 201, id ?? undefined);
  }

  /** A dry run's new collection: within the quota, counting those it would have made. */
  private async wouldCreateCollection(collection: string): Promise<void> {
    if (this.wouldCreate.has(collection)) return;
    const { used, limit } = await this.deps.collections.quota(this.principal);
    if (used + this.wouldCreate.size >= limit) throw new CollectionQuotaExceededError(limit);
    this.wouldCreate.add(collection);
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
        await this.createCollection(collection);
      } catch (error) {
        if (!(error instanceof DomainError) || error.status >= 500) throw error;
        refusal ??= new DomainError(
          error.code,
          `Collection '${collection.name}': ${error.message}`,
          error.errors,
          error.extensions,
        );
      }
    }
    return refusal ? failure(line, refusal) : ok(line, 200);
  }

  private async createCollection(collection: ImportCollection): Promise<void> {
    const { collections, indexes, gate } = this.deps;
    await this.rules.take(collection, this.options.dryRun);
    if (this.options.dryRun) {
      if (!(await collections.find(this.principal, collection.name)))
        await this.wouldCreateCollection(collection.name);
      return;
    }
    await collections.findOrCreate(this.principal, collection.name);
    // Indexes are root and team keys' to make (as on /data/{c}/index): a sub key's import
    // accepts a manifest whose indexes exist already, as an export by the sub key names them.
    if (this.principal.kind === 'sub') {
      const present = new Set(
        (await indexes.list(this.principal, collection.name)).map((i) => i.name),
      );
      const missing = collection.indexes.filter((index) => !present.has(index.name));
      if (missing.length > 0)
        throw new ForbiddenError(
          `A sub key creates no indexes; missing: ${missing.map((i) => i.name).join(', ')}.`,
        );
      return;
    }
    for (const index of collection.indexes)
      await gate.around(this.principal, collection.name, () =>
        indexes.create(this.principal, collection.name, index),
      );
  }

  /** An end record: does it count and digest the lines since the manifest? */
  private end(line: number, record: Extract<ImportRecord, { type: 'end' }>): Outcome {
    const read = this.digest.end();
    if (read.items !== record.items || read.sha256 !== record.sha256)
      return failure(
        line,
        new DigestMismatchError(
          `The end record counts ${record.items} lines; ${read.items} were read${read.items === record.items ? ', with another SHA-256' : ''}: the file is damaged or incomplete.`,
        ),
      );
    return ok(line, 200);
  }
}
