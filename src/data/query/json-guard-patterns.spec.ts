import fc from 'fast-check';
import { ValidationFailedError, type FieldError } from '../../common/errors';
import type { ListQuery } from '../../common/http/list-query';
import { MANAGED_FIELDS } from './data.constants';
import {
  FIELD_NAME_SCHEMA_PATTERN,
  FIELD_PATH_SCHEMA_PATTERN,
  FIELDS_SCHEMA_PATTERN,
  SORT_SCHEMA_PATTERN,
  fieldNameProblem,
  fieldPathProblem,
  MAX_FIELD_NAME_LENGTH,
  ORDER_PATH_SCHEMA_PATTERN,
  OWNER_FIELD_SCHEMA_PATTERN,
  orderPathProblem,
} from './json-guard';
import { sortKeys } from './list-plan';
import { parseProjection } from './projection';

function rejects(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (error) {
    if (error instanceof ValidationFailedError) return true;
    throw error;
  }
}

describe('the documented field-name patterns', () => {
  // The OpenAPI document's patterns are ECMA-262 regular expressions with Unicode semantics.
  const nameSchema = new RegExp(FIELD_NAME_SCHEMA_PATTERN, 'u');
  const ownerSchema = new RegExp(OWNER_FIELD_SCHEMA_PATTERN, 'u');
  const pathSchema = new RegExp(FIELD_PATH_SCHEMA_PATTERN, 'u');
  const pathAccepted = (path: string): boolean =>
    pathSchema.test(path) && [...path].length <= MAX_FIELD_NAME_LENGTH;

  /** Names built from the characters and words the rules are about. */
  const name = fc
    .array(
      fc.oneof(
        fc.constantFrom('.', '$', '"', '\\', '\u0000', '\u001f', '\u007f', '\u{1F600}', '_id'),
        fc.constantFrom('__proto__', 'constructor', 'prototype', '_bsontype', '_createdAt'),
        fc.string({ maxLength: 3 }),
        fc.string({ minLength: 250, maxLength: 260 }),
      ),
      { maxLength: 4 },
    )
    .map((parts) => parts.join(''));

  it('accept a field name exactly when the service does', () => {
    fc.assert(
      fc.property(name, (n) => nameSchema.test(n) === (fieldNameProblem(n) === null)),
      { numRuns: 2000 },
    );
  });

  it('accept an owner field exactly when the service does', () => {
    fc.assert(
      fc.property(
        name,
        (n) => ownerSchema.test(n) === (fieldNameProblem(n) === null && !MANAGED_FIELDS.has(n)),
      ),
      { numRuns: 2000 },
    );
  });

  it('accept a dotted path exactly when the service does', () => {
    fc.assert(
      fc.property(name, (p) => pathAccepted(p) === (fieldPathProblem(p) === null)),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['a plain name', 'status', true],
    ['a dotted path', 'a.b.c', true],
    ['_id', '_id', true],
    ['an empty segment', 'a..b', false],
    ['an operator segment', 'a.$b', false],
    ['a prototype segment', 'a.__proto__.b', false],
    ['a segment that only starts like a reserved name', '__proto__x.b', true],
    ['256 astral characters', '\u{1F600}'.repeat(256), true],
    ['257 astral characters', '\u{1F600}'.repeat(257), false],
  ])('agrees on %s', (_label, path, accepted) => {
    expect(pathAccepted(path)).toBe(accepted);
    expect(fieldPathProblem(path) === null).toBe(accepted);
  });

  // A request the pattern refuses must be one the service refuses too (a fuzzer sends such
  // values as invalid data); what the pattern cannot say (repeats, overlaps, lengths) is refused
  // by the service alone.
  const spaced = fc.oneof(
    name,
    fc
      .tuple(fc.constantFrom(' ', '\u00a0', '\u3000', '\ufeff'), name, fc.boolean())
      .map(([space, n, before]) => (before ? `${space}${n}` : `${n}${space}`)),
  );
  const listed = fc
    .array(fc.tuple(fc.boolean(), spaced), { minLength: 1, maxLength: 6 })
    .map((parts) => parts.map(([minus, n]) => (minus ? `-${n}` : n)).join(','));
  const sortSchema = new RegExp(SORT_SCHEMA_PATTERN, 'u');
  const fieldsSchema = new RegExp(FIELDS_SCHEMA_PATTERN, 'u');
  const accepts = (fn: () => unknown): boolean => !rejects(fn);

  it('cover every sort the service accepts', () => {
    fc.assert(
      fc.property(listed, fc.constantFrom(...listedSamples), (generated, sample) =>
        [generated, sample].every((sort) => {
          const errors: FieldError[] = [];
          sortKeys({ sort, sortOrderGiven: false, sortOrder: 'desc' } as ListQuery, errors);
          return errors.length > 0 || sortSchema.test(sort);
        }),
      ),
      { numRuns: 2000 },
    );
  });

  it('accept an aggregate path exactly when the service does', () => {
    const orderSchema = new RegExp(ORDER_PATH_SCHEMA_PATTERN, 'u');
    fc.assert(
      fc.property(
        spaced,
        (p) =>
          (orderSchema.test(p) && [...p].length <= MAX_FIELD_NAME_LENGTH) ===
          (orderPathProblem(p) === null),
      ),
      { numRuns: 2000 },
    );
  });

  it('refuse, with the service, a segment that starts or ends with a space', () => {
    for (const text of [' a', 'a ', 'x.\u00a0a', 'a.b\u3000']) {
      expect(sortSchema.test(text)).toBe(false);
      expect(fieldsSchema.test(text)).toBe(false);
      expect(rejects(() => parseProjection(text))).toBe(true);
    }
    expect(sortSchema.test('a b')).toBe(true);
  });

  it('cover every projection the service accepts', () => {
    fc.assert(
      fc.property(listed, fc.constantFrom(...listedSamples), (generated, sample) =>
        [generated, sample].every(
          (fields) => !accepts(() => parseProjection(fields)) || fieldsSchema.test(fields),
        ),
      ),
      { numRuns: 2000 },
    );
  });
});

const listedSamples = [
  'a',
  '-a',
  'a,-b.c',
  '--a',
  '-a,--b',
  'a,b,c,d,e',
  'x.y,z',
  '-_id',
  '_id',
  'a b',
  'x.\ufeffa',
];
