import { Inject, Injectable } from '@nestjs/common';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import type { RegExpEngine } from 'ajv/dist/types';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import { ValidationFailedError } from '../../../common/errors';
import { APP_CONFIG, type AppConfig } from '../../../config';
import { MANAGED_FIELDS } from '../../query/data.constants';
import { checkSchemaDocument, SUPPORTED_FORMATS } from './schema-document';

/** One way an item breaks its collection's schema. */
export interface SchemaError {
  /** JSON Pointer (RFC 6901) to the value in the item's own fields; `''` is the item. */
  pointer: string;
  /** The schema keyword the value fails (`type`, `required`, `pattern`, …). */
  keyword: string;
  message: string;
}

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
 * Collection schemas: checked when put (schema-document.ts), compiled once per instance and
 * text, and run against items' own fields — `_id`, `_createdAt`, `_updatedAt` and the request's
 * owner field are the service's and are not shown to the schema.
 */
@Injectable()
export class ItemSchemas {
  private readonly ajv: Ajv2020;
  private readonly compiled: LRUCache<string, ValidateFunction>;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.ajv = new Ajv2020({
      allErrors: true,
      strict: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      validateFormats: true,
      code: { regExp: re2 },
    });
    addFormats(this.ajv, [...SUPPORTED_FORMATS] as Parameters<typeof addFormats>[1]);
    this.compiled = new LRUCache({
      // SCHEMA_CACHE_SIZE schemas by their JSON text; compiling one again takes milliseconds.
      max: config.limits.schemaCacheSize,
      // Ajv keeps every schema it compiled: a schema this cache lets go is let go there too.
      dispose: (validate) => this.ajv.removeSchema(validate.schema),
    });
  }

  /** A client's schema, checked and compiled; answers its JSON text (what is stored). */
  accept(schema: unknown): string {
    const { schemaMaxBytes: maxBytes, schemaMaxDepth: maxDepth } = this.config.limits;
    const text = checkSchemaDocument(schema, { maxBytes, maxDepth });
    try {
      this.validatorOf(text);
    } catch (error) {
      throw new ValidationFailedError([{ field: 'schema', message: (error as Error).message }]);
    }
    return text;
  }

  /** The errors of an item (its own fields) against the schema's JSON text; none when it is valid. */
  check(text: string, item: Record<string, unknown>, ownerField: string): SchemaError[] {
    const validate = this.validatorOf(text);
    if (validate(ownFields(item, ownerField))) return [];
    // The first SCHEMA_MAX_ERRORS that Ajv finds.
    return (validate.errors ?? []).slice(0, this.config.limits.schemaMaxErrors).map(toSchemaError);
  }

  private validatorOf(text: string): ValidateFunction {
    let validate = this.compiled.get(text);
    if (!validate) {
      validate = this.ajv.compile(JSON.parse(text) as object);
      this.compiled.set(text, validate);
    }
    return validate;
  }
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
