import { WORDS_INDEX } from '../search/search-rule';
import { SCHEMA_ACTIONS, type SchemaAction } from '../rules/collection-rules';
import { isUtf8 } from 'node:buffer';
import { DomainError, ValidationFailedError, type FieldError } from '../../common/errors';
import { DATA_ERRORS } from '../data.errors';
import { parseRfc3339 } from '../../common/pagination/rfc3339';
import { INDEX_NAME_PATTERN } from '../indexes/dto/data-index.dto';
import { COLLECTION_NAME_PATTERN } from '../query/data.constants';
import {
  ownerFieldOf,
  takeClientId,
  type KeptTimes,
  type NewItemRequest,
} from '../query/data-requests';
import { toIndexRequest, type IndexRequest } from '../query/index-requests';
import { guardDocument, guardFieldName } from '../query/json-guard';
import { isPlainObject, type JsonBudget } from '../../common/json';
import { FORMAT, type EndRecord } from './transfer-format';
import { parseChunkLine, parseFileLine, type FileImportRecord } from './import-file-records';

/**
 * The records POST /import reads (transfer-format.ts), checked line by line: a line that is not
 * one is its own 400, never the import's. Members a record does not know are ignored (later
 * versions of format 1 add optional ones).
 */

/** A line that is not JSON, not a record, or a record of another format. */
export class MalformedLineError extends DomainError {
  constructor(detail: string) {
    super(DATA_ERRORS.MALFORMED_LINE, detail);
  }
}

/** The end record does not count or digest the lines read since the manifest. */
export class DigestMismatchError extends DomainError {
  constructor(detail: string) {
    super(DATA_ERRORS.DIGEST_MISMATCH, detail);
  }
}

/** How the items of a collection are written: the query's settings, or its manifest entry's. */
export interface CollectionSettings {
  ownerField: string;
  uniqueField: string | null;
}

export interface ImportCollection {
  name: string;
  indexes: IndexRequest[];
  /** `authField` / `uniqueField` of the manifest entry, when it names them. */
  settings: Partial<CollectionSettings>;
  /** The collection's schema as an export lists it (checked when the manifest is read). */
  schema?: { schema: unknown; action: SchemaAction };
  /** The collection's expiry rule as an export lists it (checked when the manifest is read). */
  expiry?: { field: string; afterSeconds: number };
  /** The collection's access rules as an export lists them (checked when the manifest is read). */
  access?: unknown;
  /** The collection's search configuration as an export lists it (checked when the manifest is read). */
  search?: Record<string, unknown>;
}

export type ImportRecord =
  | { type: 'manifest'; collections: ImportCollection[] }
  | { type: 'item'; collection: string; branch: string | undefined; item: unknown }
  | { type: 'end'; items: number; files: number | undefined; sha256: string }
  | FileImportRecord;

/** One line of an import body as a record. */
export function parseRecord(bytes: Buffer, text: string): ImportRecord {
  if (!isUtf8(bytes)) throw new MalformedLineError('The line is not valid UTF-8.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedLineError('The line is not JSON.');
  }
  if (!isPlainObject(value) || typeof value.type !== 'string')
    throw new MalformedLineError('The line is not a record: a JSON object with a string `type`.');
  switch (value.type) {
    case 'manifest':
      return parseManifest(value);
    case 'item':
      return parseItem(value);
    case 'end':
      return parseEnd(value);
    case 'file':
      return parseFileLine(value);
    case 'file-chunk':
      return parseChunkLine(value);
    default:
      throw new MalformedLineError(
        `Records of type ${JSON.stringify(value.type.slice(0, 64))} are not imported: manifest, item, file, file-chunk and end are.`,
      );
  }
}

function parseManifest(value: Record<string, unknown>): ImportRecord {
  if (value.format !== FORMAT)
    throw new MalformedLineError(
      `The manifest is of format ${JSON.stringify(value.format)}; this service reads format ${FORMAT}.`,
    );
  const raw = value.collections;
  if (!Array.isArray(raw))
    throw new ValidationFailedError([
      { field: 'collections', message: 'is required: an array of collections' },
    ]);
  const errors: FieldError[] = [];
  const collections: ImportCollection[] = [];
  raw.forEach((entry: unknown, i) => {
    try {
      collections.push(parseCollection(entry, `collections[${i}]`));
    } catch (error) {
      if (!(error instanceof ValidationFailedError)) throw error;
      errors.push(...(error.errors ?? []));
    }
  });
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return { type: 'manifest', collections };
}

function parseCollection(entry: unknown, at: string): ImportCollection {
  if (!isPlainObject(entry))
    throw new ValidationFailedError([{ field: at, message: 'must be an object' }]);
  const { name, indexes = [], authField, uniqueField, schema, expiry, access, search } = entry;
  if (typeof name !== 'string' || !COLLECTION_NAME_PATTERN.test(name))
    throw new ValidationFailedError([
      { field: `${at}.name`, message: `must match ${COLLECTION_NAME_PATTERN.source}` },
    ]);
  if (!Array.isArray(indexes))
    throw new ValidationFailedError([{ field: `${at}.indexes`, message: 'must be an array' }]);
  const settings: Partial<CollectionSettings> = {};
  // A value that is not a string is refused by the field-name guard ownerFieldOf applies.
  if (authField !== undefined)
    settings.ownerField = ownerFieldOf(authField as string, `${at}.authField`);
  if (uniqueField !== undefined)
    settings.uniqueField = guardFieldName(uniqueField, `${at}.uniqueField`);
  return {
    name,
    indexes: indexes
      .map((index: unknown, i) => [index, i] as const)
      // The search configuration's index comes with `search`, never as a plain index: an older
      // export's manifest lists it, and is read as a newer one, without it.
      .filter(([index]) => !(isPlainObject(index) && index.name === WORDS_INDEX))
      .map(([index, i]) => parseIndex(index, `${at}.indexes[${i}]`)),
    settings,
    ...(schema !== undefined ? { schema: parseSchemaRule(schema, `${at}.schema`) } : {}),
    ...(expiry !== undefined ? { expiry: parseExpiryRule(expiry, `${at}.expiry`) } : {}),
    ...(access !== undefined ? { access } : {}),
    ...(search !== undefined ? { search: parseSearchRule(search, `${at}.search`) } : {}),
  };
}

/** `{fields, minTokenLength}` as an export lists a collection's search (its values are checked later). */
function parseSearchRule(rule: unknown, at: string): Record<string, unknown> {
  if (!isPlainObject(rule))
    throw new ValidationFailedError([{ field: at, message: 'must be {fields, minTokenLength}' }]);
  return rule;
}

/** `{field, afterSeconds}` as an export lists a collection's expiry (its values are checked later). */
function parseExpiryRule(rule: unknown, at: string): { field: string; afterSeconds: number } {
  if (!isPlainObject(rule) || typeof rule.field !== 'string')
    throw new ValidationFailedError([{ field: at, message: 'must be {field, afterSeconds}' }]);
  const { field, afterSeconds } = rule;
  if (typeof afterSeconds !== 'number' || !Number.isInteger(afterSeconds) || afterSeconds < 1)
    throw new ValidationFailedError([
      { field: `${at}.afterSeconds`, message: 'must be an integer of 1 or more' },
    ]);
  return { field, afterSeconds };
}

/** `{schema, action}` as an export lists a collection's schema (the schema itself is checked later). */
function parseSchemaRule(rule: unknown, at: string): { schema: unknown; action: SchemaAction } {
  if (!isPlainObject(rule) || !isPlainObject(rule.schema))
    throw new ValidationFailedError([{ field: at, message: 'must be {schema: {…}, action}' }]);
  const { action = 'error' } = rule;
  if (!SCHEMA_ACTIONS.includes(action as SchemaAction))
    throw new ValidationFailedError([
      { field: `${at}.action`, message: `must be one of ${SCHEMA_ACTIONS.join(', ')}` },
    ]);
  return { schema: rule.schema, action: action as SchemaAction };
}

function parseIndex(index: unknown, at: string): IndexRequest {
  if (!isPlainObject(index))
    throw new ValidationFailedError([{ field: at, message: 'must be an object' }]);
  const { name, fields, unique = false } = index;
  if (typeof unique !== 'boolean')
    throw new ValidationFailedError([{ field: `${at}.unique`, message: 'must be a boolean' }]);
  let request: IndexRequest;
  try {
    request = toIndexRequest({ fields, unique });
  } catch (error) {
    if (!(error instanceof ValidationFailedError)) throw error;
    throw new ValidationFailedError(
      (error.errors ?? []).map((e) => ({ field: `${at}.${e.field}`, message: e.message })),
    );
  }
  // A name a client may choose, or the one the service gives an index on these fields (it is
  // made of the field paths, which may hold any character a field name may).
  if (name === request.name) return request;
  if (typeof name !== 'string' || !INDEX_NAME_PATTERN.test(name))
    throw new ValidationFailedError([
      {
        field: `${at}.name`,
        message: `must match ${INDEX_NAME_PATTERN.source}, or be the default name of its fields`,
      },
    ]);
  return { ...request, name, named: true };
}

function parseItem(value: Record<string, unknown>): ImportRecord {
  const { collection, branch, item } = value;
  if (typeof collection !== 'string' || !COLLECTION_NAME_PATTERN.test(collection))
    throw new ValidationFailedError([
      { field: 'collection', message: `must match ${COLLECTION_NAME_PATTERN.source}` },
    ]);
  if (branch !== undefined && typeof branch !== 'string')
    throw new ValidationFailedError([{ field: 'branch', message: 'must be a string' }]);
  if (item === undefined)
    throw new ValidationFailedError([{ field: 'item', message: 'is required' }]);
  return { type: 'item', collection, branch, item };
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function parseEnd(value: Record<string, unknown>): ImportRecord {
  const { items, files, sha256 } = value;
  if (!isCount(items))
    throw new ValidationFailedError([{ field: 'items', message: 'must be a whole number' }]);
  if (files !== undefined && !isCount(files))
    throw new ValidationFailedError([{ field: 'files', message: 'must be a whole number' }]);
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256))
    throw new ValidationFailedError([{ field: 'sha256', message: 'must be 64 hex digits' }]);
  return { type: 'end', items, files, sha256 };
}

/**
 * Why an end record does not match the lines read since the manifest (`read`): their count,
 * their file lines (when it counts them) or their SHA-256; null when it matches.
 */
export function endMismatch(
  read: EndRecord,
  record: Extract<ImportRecord, { type: 'end' }>,
): DigestMismatchError | null {
  const files = record.files === undefined || record.files === read.files;
  if (read.items === record.items && read.sha256 === record.sha256 && files) return null;
  const other = read.items !== record.items ? '' : files ? ', with another SHA-256' : '';
  const fileCount = files ? '' : ` (${read.files ?? 0} file lines; the end counts ${record.files})`;
  return new DigestMismatchError(
    `The end record counts ${record.items} lines; ${read.items} were read${other}${fileCount}: the file is damaged or incomplete.`,
  );
}

/**
 * An item record's item as a create request: the rules of POST /data/{c}'s `item`, except that
 * it keeps `_id`, and `_createdAt` / `_updatedAt` (RFC 3339) when it has them — one of them alone
 * stands for both.
 */
export function toImportedItemRequest(
  raw: unknown,
  settings: CollectionSettings,
  budget: JsonBudget,
): NewItemRequest {
  const item = guardDocument(raw, 'item', budget);
  const id = takeClientId(item);
  const createdAt = timeOf(item, '_createdAt');
  const updatedAt = timeOf(item, '_updatedAt');
  let times: KeptTimes | null = null;
  if (createdAt || updatedAt) {
    times = { createdAt: createdAt ?? updatedAt!, updatedAt: updatedAt ?? createdAt! };
    if (times.updatedAt < times.createdAt)
      throw new ValidationFailedError([
        { field: 'item._updatedAt', message: 'must not be before _createdAt' },
      ]);
  }
  return { id, item, ...settings, onConflict: 'error', imported: { times } };
}

/** A kept time, taken out of the item. */
function timeOf(item: Record<string, unknown>, field: '_createdAt' | '_updatedAt'): Date | null {
  if (!Object.hasOwn(item, field)) return null;
  const value = item[field];
  delete item[field];
  const parsed = typeof value === 'string' ? parseRfc3339(value) : null;
  if (!parsed)
    throw new ValidationFailedError([
      { field: `item.${field}`, message: 'must be an RFC 3339 date-time' },
    ]);
  return parsed.date;
}

/** Whether a line that is not a valid record still claims to be a manifest or an end. */
export function isSectionLine(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) && (value.type === 'manifest' || value.type === 'end');
  } catch {
    return false;
  }
}
