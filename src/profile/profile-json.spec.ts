import { ValidationFailedError } from '../common/errors';
import { checkJson, isGuarded } from '../common/json';
import {
  assertStoredSize,
  MAX_REPORTED_ERRORS,
  profileJsonRules,
  type ProfileJsonKind,
} from './profile-json';

const limits = { maxBytes: 1024, maxDepth: 3 };
const settings: ProfileJsonKind = { values: 'json', patch: false };
const settingsPatch: ProfileJsonKind = { values: 'json', patch: true };
const metadataPatch: ProfileJsonKind = { values: 'string', patch: true };

function problems(value: unknown, kind: ProfileJsonKind = settings, path = 'settings') {
  const result = checkJson(value, profileJsonRules(kind, limits), path);
  return result.ok ? [] : result.errors;
}

function fields(value: unknown, kind: ProfileJsonKind = settings): string[] {
  return problems(value, kind).map((e) => e.field);
}

describe('profile JSON rules', () => {
  it('accepts objects, strings, integers and booleans within the budgets, as a guarded copy', () => {
    const value = { theme: 'dark', count: -3, on: true, nested: { deeper: { x: 'y' } } };
    const result = checkJson(value, profileJsonRules(settings, limits), 'settings');
    expect(result).toEqual({ ok: true, value });
    expect(result.ok && result.value !== value && isGuarded(result.value)).toBe(true);
  });

  it('refuses a value that is not an object', () => {
    for (const value of ['x', 1, true, null, [], undefined]) {
      expect(problems(value)).toEqual([{ field: 'settings', message: 'must be a JSON object' }]);
    }
  });

  it('refuses floats, unsafe integers and arrays, naming each path', () => {
    const errors = problems({ f: 1.5, big: 2 ** 60, list: [1], ok: 2, inner: { g: 0.1 } });
    expect(errors.map((e) => e.field).sort()).toEqual([
      'settings.big',
      'settings.f',
      'settings.inner.g',
      'settings.list',
    ]);
    expect(errors.find((e) => e.field === 'settings.f')?.message).toBe('numbers must be integers');
  });

  it('allows null only in a merge patch, at every level', () => {
    expect(fields({ a: null, b: { c: null } })).toEqual(['settings.a', 'settings.b.c']);
    expect(fields({ a: null, b: { c: null } }, settingsPatch)).toEqual([]);
  });

  it('refuses $-prefixed, dotted, empty, NUL and prototype keys at any depth', () => {
    const value = JSON.parse(
      '{"$set":1,"a.b":1,"":1,"n\\u0000ul":1,"__proto__":{"x":1},"inner":{"constructor":1,"prototype":1}}',
    ) as unknown;
    expect(problems(value)).toEqual([
      { field: 'settings["$set"]', message: "keys must not start with '$'" },
      { field: 'settings["a.b"]', message: "keys must not contain '.'" },
      { field: 'settings[""]', message: 'keys must not be empty' },
      { field: 'settings["n\\u0000ul"]', message: 'keys must not contain NUL characters' },
      { field: 'settings.__proto__', message: "'__proto__' is a reserved key" },
      { field: 'settings.inner.constructor', message: "'constructor' is a reserved key" },
      { field: 'settings.inner.prototype', message: "'prototype' is a reserved key" },
    ]);
  });

  it('counts the object itself as level 1 and refuses deeper nesting once', () => {
    expect(fields({ a: { b: { c: 1 } } })).toEqual([]);
    const errors = problems({ a: { b: { c: { d: 1 } } }, x: { y: { z: {} } } });
    expect(errors).toEqual([{ field: 'settings.a.b.c', message: 'nesting deeper than 3 levels' }]);
  });

  it('lets a member that sits below the stored object nest less deep', () => {
    const userMetadata = { ...settings, depthOffset: 1 };
    expect(problems({ a: { b: 1 } }, userMetadata)).toEqual([]);
    expect(problems({ a: { b: { c: 1 } } }, userMetadata)).toEqual([
      { field: 'settings.a.b', message: 'nesting deeper than 2 levels' },
    ]);
  });

  it('survives nesting far beyond the budget without recursing into it', () => {
    const levels = 200_000;
    const deep = JSON.parse('{"a":'.repeat(levels) + '1' + '}'.repeat(levels)) as unknown;
    expect(problems(deep)).toHaveLength(1);
  });

  it('refuses an object larger than the size budget', () => {
    expect(problems({ text: 'x'.repeat(2000) })).toEqual([
      { field: 'settings', message: expect.stringMatching(/bytes serialized; the limit is 1024/) },
    ]);
  });

  it('accepts only strings (or null in a patch) in metadata', () => {
    expect(problems({ a: 'x', b: null }, metadataPatch, 'metadata')).toEqual([]);
    const errors = problems({ a: 1, b: true, c: {} }, metadataPatch, 'metadata');
    expect(errors).toEqual(
      ['metadata.a', 'metadata.b', 'metadata.c'].map((field) => ({
        field,
        message: 'values must be strings',
      })),
    );
  });

  it('caps the number of reported errors', () => {
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, 0.5]));
    expect(problems(many)).toHaveLength(MAX_REPORTED_ERRORS);
  });
});

describe('assertStoredSize', () => {
  it('measures UTF-8 bytes of the JSON text, per field', () => {
    expect(() => assertStoredSize({ settings: { a: 'é' } }, 10)).not.toThrow();
    expect(() => assertStoredSize({ settings: { a: 'é' } }, 9)).toThrow(ValidationFailedError);
    try {
      assertStoredSize({ settings: { a: 'é' }, metadata: { b: 'xx' } }, 9);
    } catch (error) {
      expect((error as ValidationFailedError).errors).toEqual([
        {
          field: 'settings',
          message: 'the stored result would be 10 bytes serialized; the limit is 9',
        },
        {
          field: 'metadata',
          message: 'the stored result would be 10 bytes serialized; the limit is 9',
        },
      ]);
    }
  });
});
