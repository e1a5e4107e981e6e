import { ValidationFailedError, type FieldError } from '../common/errors';
import {
  describeFieldNameFault,
  isPlainObject,
  JsonMember,
  keyFault,
  PROTOTYPE_KEYS,
  serializedSize,
  type JsonRules,
  type KeyRules,
  UNREADABLE_KEY_CHARACTERS,
} from '../common/json';
import type { AppConfig } from '../config';
import { sharedSchema, sharedSchemaRef } from '../common/http/openapi-schemas';

/**
 * The rules for the free-form JSON of profiles (settings, metadata, userMetadata and plan
 * metadata) as a configuration of the JSON validator (src/common/json).
 */

export interface ProfileJsonLimits {
  /** Largest serialized size (UTF-8 bytes of JSON.stringify) of one object. */
  maxBytes: number;
  /** Deepest nesting; the object itself is level 1, an object inside it level 2, … */
  maxDepth: number;
}

export interface ProfileJsonKind {
  /** 'json': object, string, integer or boolean. 'string': strings only (metadata, flat). */
  values: 'json' | 'string';
  /** A merge patch (RFC 7386): `null` is allowed at every level and means "remove this key". */
  patch: boolean;
  /** Levels the member sits below the stored object (userMetadata lives in settings: 1). */
  depthOffset?: number;
}

/** A response should stay readable even when a body breaks the rules thousands of times. */
export const MAX_REPORTED_ERRORS = 50;

export function profileJsonLimits(config: AppConfig): ProfileJsonLimits {
  return {
    maxBytes: config.limits.profileJsonMaxBytes,
    maxDepth: config.limits.profileJsonMaxDepth,
  };
}

const KEY_RULES: KeyRules = {
  reserved: PROTOTYPE_KEYS,
  storable: true,
  refusedCharacters: UNREADABLE_KEY_CHARACTERS,
};

/** The data API's wording, about keys, except where it said NUL and name. */
function keyProblem(key: string): string | null {
  const fault = keyFault(key, KEY_RULES);
  if (fault === null) return null;
  if (fault === 'nul') return 'keys must not contain NUL characters';
  if (fault === 'reserved') return `'${key}' is a reserved key`;
  return `keys ${describeFieldNameFault(fault, key, KEY_RULES)}`;
}

function valueProblem(value: unknown, kind: ProfileJsonKind): string | null {
  const strings = kind.values === 'string';
  switch (typeof value) {
    case 'string':
      return null;
    case 'boolean':
      return strings ? 'values must be strings' : null;
    case 'number':
      if (strings) return 'values must be strings';
      if (!Number.isInteger(value)) return 'numbers must be integers';
      if (!Number.isSafeInteger(value)) return 'integers must be within ±(2^53 - 1)';
      return null;
    case 'object':
      if (value === null) return kind.patch ? null : 'null is only allowed in updates';
      if (strings) return 'values must be strings';
      if (Array.isArray(value)) {
        return 'arrays are not allowed (values are objects, strings, integers or booleans)';
      }
      return isPlainObject(value) ? null : 'not a JSON value';
    case 'undefined':
    case 'bigint':
    case 'symbol':
    case 'function':
      return 'not a JSON value';
  }
}

export function profileJsonRules(kind: ProfileJsonKind, limits: ProfileJsonLimits): JsonRules {
  return {
    key: keyProblem,
    value: (value) => valueProblem(value, kind),
    budget: { maxDepth: limits.maxDepth - (kind.depthOffset ?? 0), maxBytes: limits.maxBytes },
    paths: 'quoted',
    maxErrors: MAX_REPORTED_ERRORS,
    tooDeep: (maxDepth) => `nesting deeper than ${maxDepth} levels`,
  };
}

const SAFE_INTEGER = {
  type: 'integer',
  minimum: -Number.MAX_SAFE_INTEGER,
  maximum: Number.MAX_SAFE_INTEGER,
};

/**
 * The values the rules above accept ('json' kind), for the OpenAPI document. The rules on keys
 * cannot be written there: OpenAPI 3.0 has no way to constrain the names of an object's members.
 */
export const PROFILE_JSON_VALUE = sharedSchema('ProfileJsonValue', {
  description: 'An object (of such values), a string, an integer or a boolean',
  anyOf: [
    { type: 'string' },
    { type: 'boolean' },
    SAFE_INTEGER,
    { type: 'object', additionalProperties: sharedSchemaRef('ProfileJsonValue') },
  ],
});

/** The same in a merge patch, where null (at any level) removes the key. */
export const PROFILE_JSON_PATCH_VALUE = sharedSchema('ProfileJsonPatchValue', {
  description: 'As ProfileJsonValue, or null to remove the key (JSON merge patch)',
  anyOf: [
    { type: 'string' },
    { type: 'boolean' },
    SAFE_INTEGER,
    {
      type: 'object',
      nullable: true,
      additionalProperties: sharedSchemaRef('ProfileJsonPatchValue'),
    },
  ],
});

let configuredLimits: ProfileJsonLimits | undefined;

/**
 * DTO validation runs outside dependency injection, so ProfileModule hands the configured limits
 * over when it starts. They are per process: the last application started sets them.
 */
export function useProfileJsonLimits(limits: ProfileJsonLimits): void {
  configuredLimits = limits;
}

/** A free-form profile JSON member of a request DTO, checked by the global validation pipe. */
export function ProfileJson(kind: ProfileJsonKind): PropertyDecorator {
  let built: { limits: ProfileJsonLimits; rules: JsonRules } | undefined;
  return JsonMember(
    () => {
      if (!configuredLimits) throw new Error('ProfileModule has not set the profile JSON limits');
      if (built?.limits !== configuredLimits) {
        built = { limits: configuredLimits, rules: profileJsonRules(kind, configuredLimits) };
      }
      return built.rules;
    },
    // In a patch, null for the whole member clears it.
    { nullable: kind.patch },
  );
}

/** The size budget on what would be stored (after a merge), per field: a 400 naming each. */
export function assertStoredSize(values: Record<string, unknown>, maxBytes: number): void {
  const errors: FieldError[] = Object.entries(values).flatMap(([field, value]) => {
    const size = serializedSize(value);
    const message = `the stored result would be ${size} bytes serialized; the limit is ${maxBytes}`;
    return size > maxBytes ? [{ field, message }] : [];
  });
  if (errors.length > 0) throw new ValidationFailedError(errors);
}
