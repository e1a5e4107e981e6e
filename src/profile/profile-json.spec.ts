import {
  MAX_REPORTED_ERRORS,
  serializedSize,
  sizeErrors,
  validateProfileJson,
  type ProfileJsonRules,
} from './profile-json';

const settings: ProfileJsonRules = { values: 'json', patch: false, maxBytes: 1024, maxDepth: 3 };
const settingsPatch: ProfileJsonRules = { ...settings, patch: true };
const metadataPatch: ProfileJsonRules = { ...settings, values: 'string', patch: true };

function fields(value: unknown, rules: ProfileJsonRules = settings): string[] {
  return validateProfileJson(value, rules, 'settings').map((e) => e.field);
}

describe('validateProfileJson', () => {
  it('accepts objects, strings, integers and booleans within the budgets', () => {
    expect(
      validateProfileJson(
        { theme: 'dark', count: -3, on: true, nested: { deeper: { x: 'y' } } },
        settings,
        'settings',
      ),
    ).toEqual([]);
  });

  it('refuses a value that is not an object', () => {
    for (const value of ['x', 1, true, null, [], undefined]) {
      expect(validateProfileJson(value, settings, 'settings')).toEqual([
        { field: 'settings', message: 'must be a JSON object' },
      ]);
    }
  });

  it('refuses floats, unsafe integers and arrays, naming each path', () => {
    const errors = validateProfileJson(
      { f: 1.5, big: 2 ** 60, list: [1], ok: 2, inner: { g: 0.1 } },
      settings,
      'settings',
    );
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
    expect(fields(value).sort()).toEqual(
      [
        'settings[""]',
        'settings["$set"]',
        'settings["a.b"]',
        'settings["n\\u0000ul"]',
        'settings.__proto__',
        'settings.inner.constructor',
        'settings.inner.prototype',
      ].sort(),
    );
  });

  it('counts the object itself as level 1 and refuses deeper nesting once', () => {
    expect(fields({ a: { b: { c: 1 } } })).toEqual([]);
    const errors = validateProfileJson(
      { a: { b: { c: { d: 1 } } }, x: { y: { z: {} } } },
      settings,
      'settings',
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toBe('nesting deeper than 3 levels');
  });

  it('survives nesting far beyond the budget without recursing into it', () => {
    const levels = 200_000;
    const deep = JSON.parse('{"a":'.repeat(levels) + '1' + '}'.repeat(levels)) as unknown;
    expect(validateProfileJson(deep, settings, 'settings')).toHaveLength(1);
  });

  it('refuses an object larger than the size budget', () => {
    const errors = validateProfileJson({ text: 'x'.repeat(2000) }, settings, 'settings');
    expect(errors).toEqual([
      { field: 'settings', message: expect.stringMatching(/bytes serialized; the limit is 1024/) },
    ]);
  });

  it('accepts only strings (or null in a patch) in metadata', () => {
    expect(validateProfileJson({ a: 'x', b: null }, metadataPatch, 'metadata')).toEqual([]);
    expect(
      validateProfileJson({ a: 1, b: true, c: {} }, metadataPatch, 'metadata')
        .map((e) => e.field)
        .sort(),
    ).toEqual(['metadata.a', 'metadata.b', 'metadata.c']);
  });

  it('caps the number of reported errors', () => {
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, 0.5]));
    expect(validateProfileJson(many, settings, 'settings')).toHaveLength(MAX_REPORTED_ERRORS);
  });
});

describe('sizeErrors', () => {
  it('measures UTF-8 bytes of the JSON text', () => {
    expect(serializedSize({ a: 'é' })).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(sizeErrors({ a: 'é' }, 10, 'settings')).toEqual([]);
    expect(sizeErrors({ a: 'é' }, 9, 'settings')).toHaveLength(1);
  });
});
