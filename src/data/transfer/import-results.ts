import {
  COMMON_ERRORS,
  DatabaseUnavailableError,
  DomainError,
  isDatabaseUnavailable,
  type FieldError,
} from '../../common/errors';
import { BodyStreamError } from '../../common/http/ndjson';
import { DATA_ERRORS } from '../data.errors';
import type { SchemaError } from '../rules/schema/item-schemas';

/** What POST /import answers: a result line per input line, then the totals. */

/** The result line of an input line. */
export interface LineResult {
  type: 'result';
  line: number;
  status: number;
  code?: string;
  detail?: string;
  errors?: FieldError[];
  _id?: string;
  [extension: string]: unknown;
}

/** The last line of an import's response: how it ended and what it did. */
export interface ImportTotals {
  type: 'totals';
  /** `complete`: every line was read; `stopped`: the import ended at `stoppedAt`. */
  outcome: 'complete' | 'stopped';
  dryRun: boolean;
  lines: number;
  created: number;
  replaced: number;
  failed: number;
  /** Files whose chunk lines stopped before their last byte (none were stored). */
  incompleteFiles?: number;
  stoppedAt?: number;
  code?: string;
  detail?: string;
}

/** A line's result, and whether the import stops at it. */
export interface Outcome {
  result: LineResult;
  stops: boolean;
}

export function failure(line: number, error: DomainError, stops = false): Outcome {
  return {
    result: { type: 'result', line, status: error.status, ...error.members() },
    stops,
  };
}

export function ok(line: number, status: number, id?: string): Outcome {
  return {
    result: { type: 'result', line, status, ...(id !== undefined ? { _id: id } : {}) },
    stops: false,
  };
}

/**
 * A line whose write failed: a rule's refusal is its result; the database failing or an
 * unexpected error (reported through `log`) stops the import.
 */
export function lineFailure(line: number, error: unknown, log: (error: unknown) => void): Outcome {
  if (error instanceof DatabaseUnavailableError || isDatabaseUnavailable(error))
    return failure(line, new DatabaseUnavailableError(), true);
  if (error instanceof DomainError) return failure(line, error, error.status >= 500);
  log(error);
  return failure(
    line,
    new DomainError(COMMON_ERRORS.INTERNAL_ERROR, 'The line could not be written.'),
    true,
  );
}

/** A line longer than IMPORT_MAX_LINE_BYTES. */
export function lineTooLong(bytes: number): DomainError {
  return new DomainError(
    DATA_ERRORS.LINE_TOO_LONG,
    `The line has ${bytes} bytes; a line has at most the bytes IMPORT_MAX_LINE_BYTES allows.`,
  );
}

/** The line beyond IMPORT_MAX_LINES. */
export function tooManyLines(max: number): DomainError {
  return new DomainError(
    DATA_ERRORS.TOO_MANY_LINES,
    `An import reads at most ${max} lines (IMPORT_MAX_LINES).`,
  );
}

/** The body could not be read on: a result line for the line it stopped at, or none (the client left). */
export function bodyFailure(
  line: number,
  error: unknown,
  limit: { exceeded(bytes: number): DomainError },
): Outcome | null {
  if (!(error instanceof BodyStreamError)) return null;
  const domain =
    error.reason === 'too-large'
      ? limit.exceeded(error.bytes)
      : new DomainError(COMMON_ERRORS.INVALID_CONTENT_ENCODING, error.message);
  return failure(line, domain, true);
}

/** What a result adds to the totals. */
export function count(totals: ImportTotals, result: LineResult): void {
  if (result.status >= 400) totals.failed += 1;
  else if (result.status === 201) totals.created += 1;
  // 200 on an item or a file (it has an _id) replaced it; on a manifest or an end it is just
  // accepted. 202: a file's line before its last one.
  else if (result.status === 200 && result._id !== undefined) totals.replaced += 1;
}

/** The instance began shutting down: the import ends where it is; the client repeats the rest. */
export function shuttingDown(): DomainError {
  return new DomainError(
    DATA_ERRORS.SHUTTING_DOWN,
    'The instance is shutting down; import the lines from this one on again (mode=upsert repeats none).',
  );
}

/** A written item's outcome with the warnings of a schema that warns. */
export function withWarnings(outcome: Outcome, warnings: SchemaError[]): Outcome {
  if (warnings.length > 0) outcome.result.warnings = warnings;
  return outcome;
}

/** A line's outcome as the outcomes of its work. */
export function one(outcome: Outcome): Outcome[] {
  return [outcome];
}
