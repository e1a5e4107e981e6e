import fc from 'fast-check';
import { ValidationFailedError } from '../../common/errors';
import {
  fieldNameProblem,
  fieldPathProblem,
  guardDocument,
  guardFieldName,
  guardFieldPath,
  guardFilter,
} from './json-guard';
import { isGuarded, type JsonBudget } from '../../common/json';

const budget: JsonBudget = { maxDepth: 20, maxNodes: 10_000, maxChars: 1_000_000 };

function rejects(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (error) {
    if (error instanceof ValidationFailedError) return true;
    throw error;
  }
}

/** Keys that the rules accept. */
const safeKey = fc
  .string({ minLength: 1, maxLength: 12 })
  .filter((k) => fieldNameProblem(k) === null);

/** Keys that must be refused wherever they appear in an item. */
const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', '_bsontype', '', 'a\u0000b'),
  fc.string({ maxLength: 8 }).map((s) => `$${s}`),
  fc.tuple(safeKey, safeKey).map(([a, b]) => `${a}.${b}`),
);

const scalar = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);

/** Valid JSON objects within the budget (depth ≤ 6 here); no array directly inside an array. */
const validValue = fc.letrec<{ value: unknown; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(fc.oneof(scalar, tie('object')), { maxLength: 4 }),
    tie('object'),
  ),
  object: fc.dictionary(safeKey, tie('value'), { maxKeys: 4 }),
})).object;

/** Sets a hostile key somewhere inside a valid object, as an own property (like JSON.parse). */
function plant(
  target: Record<string, unknown>,
  key: string,
  path: number[],
): Record<string, unknown> {
  // A JSON round trip, not structuredClone, whose objects come from another realm under jest.
  const copy = JSON.parse(JSON.stringify(target)) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const step of path) {
    const children = Object.values(node).filter(
      (v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v),
    );
    if (children.length === 0) break;
    node = children[step % children.length] as Record<string, unknown>;
  }
  Object.defineProperty(node, key, { value: 1, enumerable: true, writable: true });
  return copy;
}

describe('json guard', () => {
  describe('guardDocument', () => {
    it('accepts generated valid objects and returns an equal, guarded copy', () => {
      fc.assert(
        fc.property(validValue, (value) => {
          const copy = guardDocument(value, 'item', budget);
          expect(copy).toEqual(value);
          expect(copy).not.toBe(value);
          expect(isGuarded(copy)).toBe(true);
        }),
      );
    });

    it('refuses a hostile key planted anywhere in a generated object', () => {
      fc.assert(
        fc.property(validValue, hostileKey, fc.array(fc.nat(), { maxLength: 6 }), (v, key, path) =>
          rejects(() => guardDocument(plant(v, key, path), 'item', budget)),
        ),
      );
    });

    it('refuses the own __proto__ key JSON.parse produces', () => {
      const parsed = JSON.parse('{"a":{"__proto__":{"polluted":true}}}') as unknown;
      expect(rejects(() => guardDocument(parsed, 'item', budget))).toBe(true);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('refuses nesting past the budget, however deep, without recursion', () => {
      fc.assert(
        fc.property(fc.integer({ min: 21, max: 100_000 }), (depth) => {
          let value: unknown = 1;
          for (let i = 0; i < depth; i += 1) value = i % 2 === 0 ? { d: value } : [value];
          return rejects(() => guardDocument({ root: value }, 'item', budget));
        }),
        { numRuns: 20 },
      );
    });

    it('accepts exactly the budgeted depth', () => {
      let value: Record<string, unknown> = { leaf: 1 };
      for (let i = 1; i < 20; i += 1) value = { d: value };
      expect(() => guardDocument(value, 'item', budget)).not.toThrow();
      expect(rejects(() => guardDocument({ d: value }, 'item', budget))).toBe(true);
    });

    it('refuses inputs over the node and character budgets', () => {
      const wide = Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`k${i}`, i]));
      expect(rejects(() => guardDocument(wide, 'item', budget))).toBe(true);
      expect(rejects(() => guardDocument({ s: 'x'.repeat(1_000_001) }, 'item', budget))).toBe(true);
    });

    it('refuses non-objects and non-JSON values', () => {
      for (const value of [null, 1, 'x', [1], new Date(), { a: undefined }, { a: () => 1 }]) {
        expect(rejects(() => guardDocument(value, 'item', budget))).toBe(true);
      }
      expect(rejects(() => guardDocument({ a: Number.NaN }, 'item', budget))).toBe(true);
      expect(rejects(() => guardDocument({ a: Infinity }, 'item', budget))).toBe(true);
    });

    it('lists every offending key at once', () => {
      try {
        guardDocument({ $a: 1, b: { 'c.d': 1 } }, 'item', budget);
        throw new Error('accepted');
      } catch (error) {
        expect((error as ValidationFailedError).errors?.map((e) => e.field).sort()).toEqual([
          'item.$a',
          'item.b.c.d',
        ]);
      }
    });
  });

  describe('guardFilter', () => {
    it('accepts scalar values and operator objects under dotted paths', () => {
      const filter = guardFilter(
        { 'a.b': 1, c: 'x', d: null, e: { gte: 1, in: [1, 'x'] } },
        'filter',
      );
      expect(filter).toEqual({ 'a.b': 1, c: 'x', d: null, e: { gte: 1, in: [1, 'x'] } });
      expect(isGuarded(filter)).toBe(true);
    });

    it('refuses a $ key below a field as well (so no MongoDB operator can pass)', () => {
      fc.assert(
        fc.property(safeKey, fc.string({ maxLength: 8 }), scalar, (key, op, value) => {
          const filter = JSON.parse(JSON.stringify({ [key]: { [`$${op}`]: value } })) as unknown;
          return rejects(() => guardFilter(filter, 'filter'));
        }),
      );
    });

    it('refuses operator and reserved keys', () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.constantFrom('__proto__', 'constructor', 'a.__proto__', 'a..b', '.a', ''),
            fc.string({ maxLength: 8 }).map((s) => `$${s}`),
            fc.tuple(safeKey, fc.string({ maxLength: 5 })).map(([a, b]) => `${a}.$${b}`),
          ),
          scalar,
          (key, value) => {
            const filter = JSON.parse(JSON.stringify({ [key]: value })) as unknown;
            return rejects(() => guardFilter(filter, 'filter'));
          },
        ),
      );
    });
  });

  describe('field names and paths', () => {
    it('accepts plain names and refuses dotted ones as names but not as paths', () => {
      expect(guardFieldName('userId', 'authField')).toBe('userId');
      expect(guardFieldPath('a.b.c', 'sort')).toBe('a.b.c');
      expect(rejects(() => guardFieldName('a.b', 'authField'))).toBe(true);
      expect(fieldPathProblem('a.$b')).not.toBeNull();
      expect(fieldPathProblem('x'.repeat(257))).not.toBeNull();
      expect(rejects(() => guardFieldName(5, 'authField'))).toBe(true);
    });

    it('refuses names the fallback database stores but cannot read back: ", \\, controls', () => {
      for (const name of ['a"b', 'a\\b', 'a\nb', 'a\tb', '\u0001', 'a\u001f']) {
        expect(fieldNameProblem(name)).toBe(`must not contain '"', '\\' or control characters`);
        expect(fieldPathProblem(`x.${name}`)).not.toBeNull();
      }
      for (const name of ["it's", 'a/b', 'a\u007fb', 'ä ö', '😀']) {
        expect(fieldNameProblem(name)).toBeNull();
      }
    });

    it('refuses such names as item keys at any depth, naming the path', () => {
      const check = () => guardDocument({ a: [{ 'x"y': 1 }] }, 'item');
      expect(rejects(check)).toBe(true);
      try {
        check();
      } catch (error) {
        expect((error as ValidationFailedError).errors?.map((e) => e.field)).toEqual([
          'item.a[0].x"y',
        ]);
      }
    });
  });
});
