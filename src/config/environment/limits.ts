import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';

/** What one client may send and ask for: body size, request rate, pages, data and profile sizes. */
export class LimitsVariables {
  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  BODY_LIMIT = 1024 * 1024;

  /** At most a billion: the database store numbers a window's requests with ten digits. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  RATE_LIMIT_MAX = 1000;

  /**
   * Requests per window of a publishable key from one client address (its budget is kept per key
   * and address: one key serves every visitor of a site). At most a billion, as RATE_LIMIT_MAX.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  RATE_LIMIT_PUBLISHABLE_MAX = 300;

  @Type(() => Number)
  @IsInt()
  @Min(100)
  RATE_LIMIT_WINDOW_MS = 60_000;

  /**
   * Where the rate-limit counters live: `mongo` (the database, one budget per key shared by all
   * instances) or `memory` (each process counts on its own). Unset: mongo when
   * NODE_ENV=production, memory otherwise.
   */
  @IsOptional()
  @IsIn(['mongo', 'memory'])
  RATE_LIMIT_STORE?: 'mongo' | 'memory';

  /**
   * With RATE_LIMIT_STORE=mongo: the slots an instance claims ahead in one insert (k), at most a
   * sixteenth of the limit. One insert then admits k requests; never more than the limit, at most
   * k − 1 fewer per instance when a window ends. 1: one insert per request.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  RATE_LIMIT_CHUNK = 64;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  LIST_LIMIT_DEFAULT = 50;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  LIST_LIMIT_MAX = 500;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  MAX_COLLECTIONS = 100;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(63)
  MAX_INDEXES = 20;

  /** Items per data collection; 0: unlimited (a plan may still set `itemsPerCollection`). */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(1_000_000_000)
  MAX_ITEMS_PER_COLLECTION = 0;

  /**
   * How long an instance trusts what it read of a tenant's plan entries and of the plan
   * catalogue (ms; 0: not at all, a read per request). A change written through another
   * instance takes effect here within this long (docs/plans.md).
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(600_000)
  PLAN_CACHE_MS = 5_000;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  DATA_MAX_DEPTH = 20;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  FILTER_MAX_CONDITIONS = 20;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  FILTER_MAX_IN_VALUES = 100;

  /** Protected fields one collection's access rules may name, per caller class (sub, public). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  ACCESS_MAX_PROTECTED_FIELDS = 64;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  AGGREGATE_MAX_GROUPS = 1000;

  /** Distinct words one item's search fields may hold; a write beyond it is refused (413). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  SEARCH_MAX_WORDS_PER_ITEM = 1000;

  /** Ids one item may hold at one `expand` path; an item holding more keeps them as they are. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  EXPAND_MAX_IDS_PER_ITEM = 100;

  /** Fields one collection's search configuration may name. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(256)
  SEARCH_MAX_FIELDS = 16;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  BULK_MAX_ITEMS = 500;

  /** Longest line of a POST /import body, in bytes after decoding; a longer line is refused alone. */
  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  IMPORT_MAX_LINE_BYTES = 1024 * 1024;

  /** Lines one POST /import reads; the import stops at the first line beyond. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000_000)
  IMPORT_MAX_LINES = 1_000_000;

  /** Bytes of one POST /import body: its Content-Length (413), and what it decodes to. */
  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(1024 * 1024 * 1024 * 1024)
  IMPORT_MAX_BYTES = 1024 * 1024 * 1024;

  /** Largest collection schema (PUT /data/{c}/schema), in bytes of its JSON text. */
  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(1024 * 1024)
  SCHEMA_MAX_BYTES = 64 * 1024;

  /**
   * Deepest nesting of a collection schema (objects and arrays, the schema itself level 1); the
   * request body's DATA_MAX_DEPTH bounds it too.
   */
  @Type(() => Number)
  @IsInt()
  @Min(4)
  @Max(100)
  SCHEMA_MAX_DEPTH = 16;

  /**
   * Schema nodes a collection schema applies with every `$ref` expanded where it stands (a schema
   * that refers to itself: down to DATA_MAX_DEPTH levels of the item); more is SCHEMA_TOO_COMPLEX.
   * Bounds the cost of compiling a schema and of checking one value of an item against it.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(1_000_000)
  SCHEMA_MAX_EXPANDED_NODES = 2000;

  /** Instructions of one compiled `pattern` / `patternProperties` RE2 program; more is SCHEMA_TOO_COMPLEX. */
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(1_000_000)
  SCHEMA_PATTERN_MAX_PROGRAM = 4000;

  /**
   * Milliseconds compiling one collection schema may take on an instance (once per schema and
   * instance; a PUT allows half); more is SCHEMA_TOO_COMPLEX. A compile stopped while the process
   * had the CPU for less than half of it runs again, at most twice.
   */
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(60_000)
  SCHEMA_COMPILE_MAX_MS = 1000;

  /**
   * Milliseconds checking the items of one write (or one import line, one schema-violations page)
   * against their schema may take; more refuses the write with SCHEMA_TOO_COMPLEX.
   */
  @Type(() => Number)
  @IsInt()
  @Min(5)
  @Max(60_000)
  SCHEMA_CHECK_MAX_MS = 50;

  /**
   * Items one multi-item update of a collection with a schema, or by a sub key under an update
   * rule, or that writes a search field, may change (all checked first).
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  SCHEMA_MULTI_UPDATE_MAX = 1000;

  /** Errors reported per item that breaks its schema, and violating items per schema-violations page. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  SCHEMA_MAX_ERRORS = 20;

  /** Compiled collection schemas an instance keeps (the least recently used go first). */
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(100_000)
  SCHEMA_CACHE_SIZE = 500;

  @Type(() => Number)
  @IsInt()
  @Min(1024)
  PROFILE_JSON_MAX_BYTES = 64 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  PROFILE_JSON_MAX_DEPTH = 10;
}

/** The limits of collection schemas (AppConfig's `limits.schema*`). */
export interface SchemaLimits {
  /** PUT /data/{c}/schema: largest JSON text, deepest nesting. */
  schemaMaxBytes: number;
  schemaMaxDepth: number;
  /** Items one multi-item update of a collection with a schema may change. */
  schemaMultiUpdateMax: number;
  /** Errors per item (and violating items per page) reported; compiled schemas kept. */
  schemaMaxErrors: number;
  schemaCacheSize: number;
  /** What one schema may cost: nodes with every `$ref` expanded, RE2 program size, time. */
  schemaMaxExpandedNodes: number;
  schemaPatternMaxProgram: number;
  schemaCompileMaxMs: number;
  schemaCheckMaxMs: number;
}

export function schemaLimitsOf(vars: LimitsVariables): SchemaLimits {
  return {
    schemaMaxBytes: vars.SCHEMA_MAX_BYTES,
    schemaMaxDepth: vars.SCHEMA_MAX_DEPTH,
    schemaMultiUpdateMax: vars.SCHEMA_MULTI_UPDATE_MAX,
    schemaMaxErrors: vars.SCHEMA_MAX_ERRORS,
    schemaCacheSize: vars.SCHEMA_CACHE_SIZE,
    schemaMaxExpandedNodes: vars.SCHEMA_MAX_EXPANDED_NODES,
    schemaPatternMaxProgram: vars.SCHEMA_PATTERN_MAX_PROGRAM,
    schemaCompileMaxMs: vars.SCHEMA_COMPILE_MAX_MS,
    schemaCheckMaxMs: vars.SCHEMA_CHECK_MAX_MS,
  };
}
