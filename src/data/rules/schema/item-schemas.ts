import { Inject, Injectable } from '@nestjs/common';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import type { RegExpEngine } from 'ajv/dist/types';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import { ValidationFailedError } from '../../../common/errors';
import { APP_CONFIG, type AppConfig } from '../../../config';
import { MANAGED_FIELDS } from '../../query/data.constants';
import { checkSchemaComplexity } from './schema-complexity';
import { checkSchemaDocument, SUPPORTED_FORMATS } from './schema-document';
import { BudgetExceeded, withinBudget } from './schema-budget';
import { SchemaTooComplexError, type SchemaError } from './schema.errors';
import { uniqueItemsKeyword } from './unique-items';

export type { SchemaError } from './schema.errors';

/**
 * RE2 (linear time) for `pattern` and `patternProperties`, as Ajv asks for a RegExp engine. Ajv
 * shares a compiled pattern between the places that name it by its `toString()`: each pattern
 * must answer its own.
 */
const re2: RegExpEngine = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(pattern);
    return { test: (input: string) => compiled.test(input), toString: () => `re2:${pattern}` };
  },
  { code: 're2js' },
);

/**
 * Collection schemas: checked when put (schema-document.ts, and what they cost:
 * schema-complexity.ts), compiled once per instance and text, and run against items' own fields —
 * `_id`, `_createdAt`, `_updatedAt` and the request's owner field are the service's and are not
 * shown to the schema. Compiling runs within SCHEMA_COMPILE_MAX_MS and the checks of one write
 * within SCHEMA_CHECK_MAX_MS of the event loop (schema-budget.ts): beyond, SCHEMA_TOO_COMPLEX.
 */
@Injectable()
export class ItemSchemas {
  /** Replaced whole when a compile is stopped part-way: what it had taken in cannot be trusted. */
  private ajv = newAjv();
  private readonly compiled: LRUCache<string, ValidateFunction>;
  /** Schemas found beyond a bound here, with why: not measured or compiled again on every write. */
  private readonly tooComplex: LRUCache<string, SchemaTooComplexError>;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.compiled = new LRUCache({
      // SCHEMA_CACHE_SIZE schemas by their JSON text; compiling one again takes milliseconds.
      max: config.limits.schemaCacheSize,
      // Ajv keeps every schema it compiled: a schema this cache lets go is let go there too.
      dispose: (validate) => this.ajv.removeSchema(validate.schema),
    });
    // Timed by Date, as the service's other expiries are (and as tests hold it).
    this.tooComplex = new LRUCache({ max: config.limits.schemaCacheSize, perf: Date });
  }

  /** A client's schema, checked and compiled; answers its JSON text (what is stored). */
  accept(schema: unknown): string {
    const { limits } = this.config;
    const text = checkSchemaDocument(schema, {
      maxBytes: limits.schemaMaxBytes,
      maxDepth: limits.schemaMaxDepth,
    });
    this.measure(schema as Record<string, unknown>);
    this.validatorOf(text, true);
    return text;
  }

  /** What the schema may cost, before Ajv compiles it (schema-complexity.ts). */
  private measure(schema: Record<string, unknown>): void {
    const { limits } = this.config;
    checkSchemaComplexity(schema, {
      maxExpandedNodes: limits.schemaMaxExpandedNodes,
      maxPatternProgram: limits.schemaPatternMaxProgram,
      maxDataDepth: limits.dataMaxDepth,
    });
  }

  /** The errors of an item (its own fields) against the schema's JSON text; none when it is valid. */
  check(text: string, item: Record<string, unknown>, ownerField: string): SchemaError[] {
    return this.checkAll(text, [item], ownerField, (errors) => errors)[0] ?? [];
  }

  /**
   * Checks items against the schema's JSON text, one after the other, handing each one's errors
   * (none when it is valid) to `next`; all the checks within SCHEMA_CHECK_MAX_MS, else
   * SCHEMA_TOO_COMPLEX. What `next` throws ends the calls.
   */
  checkAll<T>(
    text: string,
    items: readonly Record<string, unknown>[],
    ownerField: string,
    next: (errors: SchemaError[], item: Record<string, unknown>) => T,
  ): T[] {
    const validate = this.validatorOf(text, false);
    const maxErrors = this.config.limits.schemaMaxErrors;
    const ms = this.config.limits.schemaCheckMaxMs;
    try {
      // The checks alone within the budget, so that they can run again when the instance was
      // short of CPU rather than the items costly (up to twice: SCHEMA_CHECK_MAX_MS is time
      // on the clock, and a busy host must not refuse ordinary items).
      const found = withinBudget(
        ms,
        () =>
          items.map((item) => ({
            item,
            errors: validate(ownFields(item, ownerField))
              ? []
              : // The first SCHEMA_MAX_ERRORS that Ajv finds.
                (validate.errors ?? []).slice(0, maxErrors).map(toSchemaError),
          })),
        { retriesWhenStarved: 2 },
      );
      return found.map(({ item, errors }) => next(errors, item));
    } catch (error) {
      if (!(error instanceof BudgetExceeded)) throw error;
      throw new SchemaTooComplexError(
        'SCHEMA_CHECK_MAX_MS',
        `took over ${ms} ms checking the item${items.length === 1 ? '' : 's'} of this request`,
      );
    }
  }

  /**
   * The compiled schema. `putting`: a schema being put, whose problems are the client's 400 and
   * which must compile within half of SCHEMA_COMPILE_MAX_MS, leaving room on a busier instance.
   */
  private validatorOf(text: string, putting: boolean): ValidateFunction {
    const known = this.compiled.get(text);
    if (known) return known;
    const limit = this.config.limits.schemaCompileMaxMs;
    const ms = putting ? Math.ceil(limit / 2) : limit;
    const refused = putting ? undefined : this.tooComplex.get(text);
    if (refused) throw refused;
    const schema = JSON.parse(text) as object;
    if (!putting) {
      // A schema stored before these bounds, or under larger ones: measured before it compiles.
      try {
        this.measure(schema as Record<string, unknown>);
      } catch (error) {
        if (error instanceof SchemaTooComplexError) this.tooComplex.set(text, error);
        throw error;
      }
    }
    let validate: ValidateFunction;
    let attempts = 0;
    try {
      // A compile stopped by its budget while the host kept this process from the CPU (the
      // compile waited for a core) runs again, on a new Ajv: the stopped one holds half of the
      // schema's state, on which a later compile fails ("ajv implementation error").
      const compile = () => {
        if (attempts++ > 0) this.ajv = newAjv();
        return this.ajv.compile(schema);
      };
      validate = withinBudget(ms, compile, { retriesWhenStarved: 2 });
    } catch (error) {
      if (error instanceof BudgetExceeded) {
        // Stopped part-way, Ajv is left with half of the schema's state, on which a later
        // compile fails ("ajv implementation error"): a new instance compiles from here on (what
        // was compiled before keeps its validate functions).
        this.ajv = newAjv();
        const tooLong = compileTooLong(ms, putting);
        // Only for a while: a compile that ran out of time may have met a moment when this
        // instance was short of CPU, and a schema within every static limit must not stay
        // refused on one instance for good. Meanwhile writes are refused at once, not after
        // another SCHEMA_COMPILE_MAX_MS each.
        if (!putting) this.tooComplex.set(text, tooLong, { ttl: COMPILE_REFUSAL_KEPT_MS });
        throw tooLong;
      }
      // What Ajv had taken in of a schema it refused goes with it.
      this.ajv.removeSchema(schema);
      if (!putting) throw error;
      throw new ValidationFailedError([{ field: 'schema', message: (error as Error).message }]);
    }
    this.compiled.set(text, validate);
    return validate;
  }
}

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    validateFormats: true,
    code: { regExp: re2 },
  });
  addFormats(ajv, [...SUPPORTED_FORMATS] as Parameters<typeof addFormats>[1]);
  // Ajv's own compares pairs of elements: quadratic in the array's length.
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(uniqueItemsKeyword);
  return ajv;
}

/** How long a stored schema whose compile ran out of time is refused before it is tried again. */
const COMPILE_REFUSAL_KEPT_MS = 60_000;

function compileTooLong(ms: number, putting: boolean): SchemaTooComplexError {
  return new SchemaTooComplexError(
    'SCHEMA_COMPILE_MAX_MS',
    putting
      ? `took over ${ms} ms to compile, half of what an instance allows`
      : `took over ${ms} ms to compile on this instance`,
  );
}

/** The item without the fields the service keeps. */
function ownFields(item: Record<string, unknown>, ownerField: string): Record<string, unknown> {
  const own: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(item))
    if (!MANAGED_FIELDS.has(field) && field !== ownerField && field !== '_revision')
      own[field] = value;
  return own;
}

/** Ajv's error, pointing at the value itself (a missing or extra property included). */
function toSchemaError(error: ErrorObject): SchemaError {
  const { params } = error;
  const member =
    (error.keyword === 'required' || error.keyword === 'dependentRequired') &&
    typeof params.missingProperty === 'string'
      ? params.missingProperty
      : error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string'
        ? params.additionalProperty
        : error.keyword === 'unevaluatedProperties' &&
            typeof params.unevaluatedProperty === 'string'
          ? params.unevaluatedProperty
          : null;
  const pointer =
    member === null
      ? error.instancePath
      : `${error.instancePath}/${member.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return { pointer, keyword: error.keyword, message: error.message ?? 'is not valid' };
}
