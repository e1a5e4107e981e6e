import fc from 'fast-check';
import { ValidationFailedError, type FieldError } from '../errors';
import {
  describeFieldNameFault,
  isPlainObject,
  keyFault,
  PROTOTYPE_KEYS,
  type JsonObject,
  type KeyRules,
} from './json';
import {
  checkBody,
  CheckedJson,
  checkJson,
  guardJson,
  isGuarded,
  jsonValueProblem,
  type JsonBudget,
  type JsonRules,
  type MemberRules,
} from './json-validator';
import { requestJsonRules } from './request-json';

const PLANTED = 'planted!';

/** Refuses the key PLANTED (and prototype keys) and anything but JSON values. */
function rules(budget: Partial<JsonBudget> = {}, more: Partial<JsonRules> = {}): JsonRules {
  return {
    key: (key) => (key === PLANTED || PROTOTYPE_KEYS.has(key) ? 'bad key' : null),
    value: jsonValueProblem,
    budget: { maxDepth: 20, ...budget },
    ...more,
  };
}

function problems(value: unknown, with_: JsonRules = rules(), path = 'v'): FieldError[] {
  const result = checkJson(value, with_, path);
  return result.ok ? [] : result.errors;
}

function nest(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i += 1) value = i % 2 === 0 ? { d: value } : [value];
  return value;
}

/** Every plain object in the tree. */
function objectsIn(value: unknown): JsonObject[] {
  const found: JsonObject[] = [];
  const pending = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (Array.isArray(next)) pending.push(...(next as unknown[]));
    else if (isPlainObject(next)) {
      found.push(next);
      pending.push(...Object.values(next));
    }
  }
  return found;
}

/** JSON objects whose keys the rules above accept. */
const jsonObject = fc
  .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 5 })
  .filter((value) =>
    objectsIn(value).every((o) =>
      Object.keys(o).every((k) => k !== PLANTED && !PROTOTYPE_KEYS.has(k)),
    ),
  );

/** A copy of `value` with `key` set as an own property (as JSON.parse sets it) in its n-th object. */
function plant(value: JsonObject, key: string, n: number): JsonObject {
  // A JSON round trip, not structuredClone, whose objects come from another realm under jest.
  const copy = JSON.parse(JSON.stringify(value)) as JsonObject;
  const objects = objectsIn(copy);
  const target = objects[n % objects.length] as JsonObject;
  Object.defineProperty(target, key, {
    value: { polluted: true },
    enumerable: true,
    writable: true,
  });
  return copy;
}

describe('checkJson', () => {
  it('returns an equal, fresh, guarded copy that keeps the key order', () => {
    fc.assert(
      fc.property(jsonObject, (value) => {
        const result = checkJson(value, rules(), 'v');
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        expect(result.value).toEqual(value);
        expect(result.value).not.toBe(value);
        expect(JSON.stringify(result.value)).toBe(JSON.stringify(value));
        expect(isGuarded(result.value)).toBe(true);
        expect(isGuarded(value)).toBe(false);
      }),
    );
  });

  it('with copy: false answers the value itself, unbranded, and the problems a copy would have', () => {
    fc.assert(
      fc.property(jsonObject, fc.nat(), fc.boolean(), (value, n, planted) => {
        const input = planted ? plant(value, PLANTED, n) : value;
        const checked = checkJson(input, { ...rules(), copy: false }, 'v');
        const copied = checkJson(input, rules(), 'v');
        expect(checked.ok).toBe(copied.ok);
        if (checked.ok) {
          expect(checked.value).toBe(input);
          expect(isGuarded(checked.value)).toBe(false);
        } else expect(checked).toEqual(copied);
      }),
    );
  });

  it('finds a refused key planted anywhere, at its path', () => {
    fc.assert(
      fc.property(jsonObject, fc.nat(), (value, n) => {
        const errors = problems(plant(value, PLANTED, n));
        expect(errors).toEqual([
          { field: expect.stringMatching(/^v(\..*)?\.planted!$/) as string, message: 'bad key' },
        ]);
      }),
    );
  });

  it('lists problems in document order, checking what lies under a refused key', () => {
    const bad = undefined;
    const value = { a: { b: bad }, [PLANTED]: { c: bad }, d: [bad, { [PLANTED]: 1 }], e: bad };
    expect(problems(value)).toEqual([
      { field: 'v.a.b', message: 'is not a JSON value' },
      { field: 'v.planted!', message: 'bad key' },
      { field: 'v.planted!.c', message: 'is not a JSON value' },
      { field: 'v.d[0]', message: 'is not a JSON value' },
      { field: 'v.d[1].planted!', message: 'bad key' },
      { field: 'v.e', message: 'is not a JSON value' },
    ]);
  });

  it('never lets a permissive rule set the prototype of a copy', () => {
    const permissive: JsonRules = { ...rules(), key: () => null };
    const parsed = JSON.parse('{"a":{"__proto__":{"polluted":true}}}') as unknown;
    const result = checkJson(parsed, permissive, 'v');
    const inner = (result.ok ? result.value : {}) as { a: object };
    expect(Object.getPrototypeOf(inner.a)).toBe(Object.prototype);
    expect(Object.keys(inner.a)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a root that is not a JSON object, unless the rules take any root', () => {
    for (const value of [null, 1, 'x', [1], new Date()]) {
      expect(problems(value)).toEqual([{ field: 'v', message: 'must be a JSON object' }]);
    }
    expect(guardJson([1, 'x'], rules({}, { root: 'any' }), '')).toEqual([1, 'x']);
    expect(guardJson('x', rules({}, { root: 'any' }), '')).toBe('x');
  });

  describe('budgets', () => {
    it('refuses nesting past maxDepth however deep, without recursion, reporting it once', () => {
      fc.assert(
        fc.property(fc.integer({ min: 21, max: 100_000 }), (depth) => {
          const errors = problems({ a: nest(depth - 1), b: nest(depth - 1), c: undefined });
          expect(errors.map((e) => e.message)).toEqual([
            'is nested deeper than 20 levels',
            'is not a JSON value',
          ]);
        }),
        { numRuns: 20 },
      );
    });

    it('accepts exactly maxDepth levels, counting from rootDepth', () => {
      expect(problems(nest(19, {}))).toEqual([]);
      expect(problems(nest(20, {}))).toHaveLength(1);
      const body = rules({}, { root: 'any', rootDepth: 0 });
      expect(problems({ member: nest(19, {}) }, body, '')).toEqual([]);
      expect(problems({ member: nest(20, {}) }, body, '')).toEqual([
        { field: `member${'[0].d'.repeat(10)}`, message: 'is nested deeper than 20 levels' },
      ]);
    });

    it('words the depth overrun as the rules say', () => {
      const worded = rules({ maxDepth: 2 }, { tooDeep: (n) => `deeper than ${n}` });
      expect(problems({ a: { b: {} } }, worded)).toEqual([
        { field: 'v.a.b', message: 'deeper than 2' },
      ]);
    });

    it('ends the walk at the node, character or key budget and reports only that', () => {
      const wide = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i]));
      expect(problems(wide, rules({ maxNodes: 100 }))).toEqual([
        { field: 'v', message: 'has more than 100 values and keys' },
      ]);
      expect(problems({ a: 'x'.repeat(10), xb: 1 }, rules({ maxChars: 10 }))).toEqual([
        { field: 'v', message: 'has more than 10 characters' },
      ]);
      expect(problems({ a: { b: 1, c: 2, d: 3 } }, rules({ maxKeys: 2 }))).toEqual([
        { field: 'v.a', message: 'has more than 2 fields' },
      ]);
      expect(problems(wide, rules({ maxNodes: 100 }, { root: 'any' }), '')).toEqual([
        { field: 'body', message: 'has more than 100 values and keys' },
      ]);
    });

    it('measures maxBytes of the JSON text once nothing else is wrong', () => {
      expect(problems({ a: 'é' }, rules({ maxBytes: 9 }))).toEqual([
        { field: 'v', message: 'is 10 bytes serialized; the limit is 9' },
      ]);
      expect(problems({ a: 'é' }, rules({ maxBytes: 10 }))).toEqual([]);
      expect(problems({ a: 'é'.repeat(10), b: undefined }, rules({ maxBytes: 9 }))).toEqual([
        { field: 'v.b', message: 'is not a JSON value' },
      ]);
    });
  });

  it('lists at most maxErrors problems', () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, undefined]));
    expect(problems(many, rules({}, { maxErrors: 5 }))).toHaveLength(5);
  });

  it('quotes keys that would read ambiguously when the rules ask for it', () => {
    const quoted = rules({}, { paths: 'quoted' });
    expect(problems({ 'a.b': { c: undefined }, 'd-e_1': [undefined] }, quoted)).toEqual([
      { field: 'v["a.b"].c', message: 'is not a JSON value' },
      { field: 'v.d-e_1[0]', message: 'is not a JSON value' },
    ]);
  });

  it('throws the problems as a 400 through guardJson', () => {
    expect(() => guardJson({ a: undefined }, rules(), 'v')).toThrow(ValidationFailedError);
  });
});

describe('requestJsonRules (the validation pipe’s first look)', () => {
  const budget: JsonBudget = { maxDepth: 20, maxNodes: 200_000 };
  const request = requestJsonRules(budget);

  it('refuses prototype keys anywhere, naming each path without a body prefix', () => {
    fc.assert(
      fc.property(jsonObject, fc.constantFrom(...PROTOTYPE_KEYS), fc.nat(), (value, key, n) => {
        const errors = problems({ item: plant(value, key, n) }, request, '');
        expect(errors).toEqual([
          {
            field: expect.stringMatching(new RegExp(`^item.*${key}$`)) as string,
            message: `field name '${key}' is a reserved name`,
          },
        ]);
      }),
    );
  });

  it('accepts any body within the budget, arrays and other keys included', () => {
    fc.assert(
      fc.property(jsonObject, (value) => {
        expect(guardJson([{ item: value, $x: 13, 'a.b': '' }], request, '')).toEqual([
          { item: value, $x: 13, 'a.b': '' },
        ]);
      }),
    );
  });

  it('refuses deep bodies, naming array items by index', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 50_000; i += 1) deep = [deep];
    expect(problems([deep], request, '')).toEqual([
      { field: `0${'[0]'.repeat(20)}`, message: 'is nested deeper than 20 levels' },
    ]);
  });
});

describe('keyFault', () => {
  const data: KeyRules = {
    reserved: new Set([...PROTOTYPE_KEYS, '_bsontype']),
    storable: true,
    maxLength: 4,
    refusedCharacters: { pattern: /[#]/, description: "'#'" },
  };
  const prototypeOnly: KeyRules = { reserved: PROTOTYPE_KEYS, storable: false };

  it.each([
    ['', 'empty', 'must not be empty'],
    ['abcde', 'too-long', 'must be at most 4 characters'],
    ['$gt', 'operator', "must not start with '$'"],
    ['a.b', 'dotted', "must not contain '.'"],
    ['a\0', 'nul', 'must not contain NUL'],
    ['a#', 'character', "must not contain '#'"],
    ['_bsontype', 'too-long', 'must be at most 4 characters'],
    ['ok', null, null],
  ])('finds %j to be %s', (key, fault, message) => {
    const found = keyFault(key, data);
    expect(found).toBe(fault);
    expect(found && describeFieldNameFault(found, key, data)).toBe(message);
  });

  it('refuses reserved names, and with storable: false nothing else', () => {
    expect(keyFault('_bsontype', { ...data, maxLength: undefined })).toBe('reserved');
    expect(describeFieldNameFault('reserved', 'constructor', data)).toBe(
      "'constructor' is a reserved name",
    );
    for (const key of ['', '$gt', 'a.b', 'a\0']) expect(keyFault(key, prototypeOnly)).toBeNull();
    for (const key of PROTOTYPE_KEYS) expect(keyFault(key, prototypeOnly)).toBe('reserved');
  });
});

describe('checkBody (the body and its free-form members in one walk)', () => {
  /** Small budgets, so that the arbitrary bodies below overrun each of them now and then. */
  const request = requestJsonRules({ maxDepth: 4, maxNodes: 40 });
  const members = new Map<string, MemberRules | null>([
    ['item', { rules: rules({ maxDepth: 3, maxNodes: 12, maxChars: 30 }, { root: 'object' }) }],
    ['filter', { rules: rules({ maxDepth: 2, maxKeys: 2 }), path: 'where' }],
    ['items', { rules: rules({ maxDepth: 2, maxNodes: 6 }), each: true, path: 'item' }],
    ['free', null],
  ]);

  /** What the two walks answered: the body's check, then each member's check of its own. */
  function twoWalks(body: JsonObject): unknown {
    const outer = checkJson(body, request, '');
    if (!outer.ok) return outer;
    const answer: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      const member = members.get(key);
      if (member === undefined || member === null || value === null) answer[key] = value;
      else if (!member.each) answer[key] = checkJson(value, member.rules, member.path ?? key);
      else if (Array.isArray(value))
        answer[key] = value.map((element) => checkJson(element, member.rules, 'item'));
      else answer[key] = value;
    }
    return { ok: true, value: answer };
  }

  function oneWalk(body: JsonObject): unknown {
    const checked = checkBody(body, request, members);
    if (!checked.ok) return checked;
    const answer: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(checked.value as JsonObject)) {
      if (value instanceof CheckedJson) answer[key] = value.result;
      else if (members.get(key)?.each === true && Array.isArray(value))
        answer[key] = value.map((element) => (element as CheckedJson).result);
      else answer[key] = value;
    }
    return { ok: true, value: answer };
  }

  const member = fc.oneof(
    fc.constant(null),
    fc.jsonValue({ maxDepth: 4 }),
    jsonObject,
    jsonObject.map((value) => plant(value, PLANTED, 1)),
  );
  const body = fc.record(
    {
      item: member,
      filter: member,
      items: fc.oneof(fc.array(member, { maxLength: 3 }), member),
      free: member,
      other: member,
    },
    { requiredKeys: [] },
  );

  it('answers what the body’s walk and then each member’s own walk answered', () => {
    fc.assert(
      fc.property(body, fc.option(fc.constantFrom(...PROTOTYPE_KEYS)), fc.nat(), (b, key, n) => {
        const sent = key === null ? (b as JsonObject) : plant(b, key, n);
        expect(oneWalk(sent)).toEqual(twoWalks(sent));
      }),
      { numRuns: 500 },
    );
  });

  it('hands members without rules on as sent, and members’ copies fresh and guarded', () => {
    const free = { a: [1] };
    const sent = { other: { b: 2 }, item: { c: [3] }, free, filter: null };
    const checked = checkBody(sent, request, members);
    if (!checked.ok) throw new Error('expected the body to pass');
    const value = checked.value as JsonObject;
    expect(Object.keys(value)).toEqual(['other', 'item', 'free', 'filter']);
    expect(value.free).toBe(free);
    expect(value.filter).toBeNull();
    expect(value.other).toEqual({ b: 2 });
    const item = (value.item as CheckedJson).take();
    expect(item).toEqual({ c: [3] });
    expect(item).not.toBe(sent.item);
    expect(isGuarded(item)).toBe(true);
  });

  it('answers the body’s problems alone, and leaves a member’s to its reader', () => {
    const over = { item: { a: 'x'.repeat(31) } };
    const checked = checkBody(over, request, members);
    expect(checked.ok).toBe(true);
    const item = (checked as { value: JsonObject }).value.item as CheckedJson;
    expect(() => item.take()).toThrow(ValidationFailedError);
    expect(item.result).toEqual({
      ok: false,
      errors: [{ field: 'item', message: 'has more than 30 characters' }],
    });
    const both = { ...over, free: new Array<number>(40).fill(1) };
    expect(checkBody(both, request, members)).toEqual({
      ok: false,
      errors: [{ field: 'body', message: 'has more than 40 values and keys' }],
    });
  });
});
