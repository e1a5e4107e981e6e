/** The building blocks every JSON rule shares: value shapes, key faults, serialized size. */

export type JsonScalar = string | number | boolean | null;
export type JsonObject = Record<string, unknown>;

/** Keys that reach an object's prototype machinery when assigned; every key rule refuses them. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

/** An object as JSON.parse makes it: no class, no array. */
export function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export function isScalar(value: unknown): value is JsonScalar {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

/** UTF-8 bytes of the value's JSON text. */
export function serializedSize(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** What is wrong with a key; each module words it its own way. */
export type KeyFault =
  'empty' | 'too-long' | 'operator' | 'dotted' | 'nul' | 'character' | 'reserved';

export interface KeyRules {
  /** Names refused outright, the prototype keys included. */
  reserved: ReadonlySet<string>;
  /** Also refuse what MongoDB would read as an operator or a path: '', '$…', '.', NUL. */
  storable: boolean;
  maxLength?: number;
  /** Characters refused anywhere in a key, and how a message names them. */
  refusedCharacters?: { pattern: RegExp; description: string };
}

/**
 * Key characters that MongoDB and the fallback database (FerretDB) do not both return intact:
 * FerretDB stores names with them but then fails every read of the document's collection.
 * Every stored JSON (data items, profile settings and metadata) refuses them.
 */
export const UNREADABLE_KEY_CHARACTERS = {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  pattern: /["\\\u0000-\u001f]/,
  description: `'"', '\\' or control characters`,
};

export function keyFault(key: string, rules: KeyRules): KeyFault | null {
  if (rules.storable) {
    if (key.length === 0) return 'empty';
    // Characters (code points), as the OpenAPI document's maxLength counts them.
    if (rules.maxLength !== undefined && [...key].length > rules.maxLength) return 'too-long';
    if (key.startsWith('$')) return 'operator';
    if (key.includes('.')) return 'dotted';
    if (key.includes('\0')) return 'nul';
  }
  if (rules.refusedCharacters?.pattern.test(key) === true) return 'character';
  return rules.reserved.has(key) ? 'reserved' : null;
}

/** The wording of field names in the data API and in the request-body guard. */
export function describeFieldNameFault(fault: KeyFault, key: string, rules: KeyRules): string {
  switch (fault) {
    case 'empty':
      return 'must not be empty';
    case 'too-long':
      return `must be at most ${rules.maxLength} characters`;
    case 'operator':
      return "must not start with '$'";
    case 'dotted':
      return "must not contain '.'";
    case 'nul':
      return 'must not contain NUL';
    case 'character':
      return `must not contain ${rules.refusedCharacters?.description ?? 'this character'}`;
    case 'reserved':
      return `'${key}' is a reserved name`;
  }
}
