import Ajv2020 from 'ajv/dist/2020';
import { DomainError } from '../../../common/errors';
import type { AppConfig } from '../../../config';
import { ItemSchemas } from './item-schemas';
import { LIMITS, schemasWith, unhurried } from './item-schemas.fixture';
import * as budget from './schema-budget';

/** The problem `work` throws: its code and detail. */
function refusal(work: () => unknown): { code: string; detail: string } {
  try {
    work();
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, detail: error.message };
    throw error;
  }
  throw new Error('nothing was refused');
}

/** d0…d39, each an allOf of two $refs to the next: checking a value doubles per level. */
const doublingRefs = () => ({
  $ref: '#/$defs/d0',
  $defs: Object.fromEntries(
    Array.from({ length: 41 }, (_, i) => [
      `d${i}`,
      i === 40 ? {} : { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] },
    ]),
  ),
});

/** One 300-property $def referenced 300 times in an allOf. */
const repeatedDef = () => ({
  $defs: {
    wide: {
      properties: Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [`p${i}`, { type: 'string' }]),
      ),
    },
  },
  allOf: Array.from({ length: 300 }, () => ({ $ref: '#/$defs/wide' })),
});

/** `(w0|…|w299){1000}`: 1.4 KB of pattern, 93,000 RE2 instructions. */
const widePattern = () => `(${Array.from({ length: 300 }, (_, i) => `w${i}`).join('|')}){1000}`;

describe('what a collection schema may cost', () => {
  it('refuses $refs whose expansion doubles per level, naming SCHEMA_MAX_EXPANDED_NODES', () => {
    const refused = refusal(() => unhurried().accept(doublingRefs()));
    expect(refused.code).toBe('SCHEMA_TOO_COMPLEX');
    expect(refused.detail).toContain('SCHEMA_MAX_EXPANDED_NODES');
    expect(refused.detail).toContain('2000');
  });

  it('counts a $def once per place that refers to it: 300 × 300 properties is refused', () => {
    const compiles = jest.spyOn(budget, 'withinBudget');
    expect(refusal(() => unhurried().accept(repeatedDef())).detail).toContain(
      'SCHEMA_MAX_EXPANDED_NODES',
    );
    // Refused before Ajv compiles anything (every compile runs within a budget).
    expect(compiles).not.toHaveBeenCalled();
    compiles.mockRestore();
    const schema = repeatedDef();
    schema.allOf = schema.allOf.slice(0, 3);
    expect(unhurried().accept(schema)).toBe(JSON.stringify(schema));
  });

  it('measures a schema stored before these bounds when a write needs it, refusing it at once', () => {
    const schemas = schemasWith();
    // Stored as text, never put through accept (an earlier version, or larger bounds).
    const stored = JSON.stringify(repeatedDef());
    // Refused without compiling, by the first write and the next (every compile and every
    // check runs within a budget).
    const compiles = jest.spyOn(budget, 'withinBudget');
    for (let write = 0; write < 2; write += 1) {
      const refused = refusal(() => schemas.check(stored, {}, 'o'));
      expect(refused.code).toBe('SCHEMA_TOO_COMPLEX');
      expect(refused.detail).toContain('SCHEMA_MAX_EXPANDED_NODES');
    }
    expect(compiles).not.toHaveBeenCalled();
    compiles.mockRestore();
  });

  it('refuses a schema that refers to itself without going down into the item', () => {
    for (const schema of [
      { $ref: '#' },
      {
        $defs: { a: { anyOf: [{ $ref: '#/$defs/b' }] }, b: { not: { $ref: '#/$defs/a' } } },
        $ref: '#/$defs/a',
      },
    ]) {
      const refused = refusal(() => unhurried().accept(schema));
      expect(refused).toMatchObject({ code: 'SCHEMA_TOO_COMPLEX' });
      expect(refused.detail).toContain('never ends');
    }
  });

  it('keeps a schema that refers to itself one level down the item, and checks it', () => {
    const schemas = unhurried();
    const tree = {
      $defs: {
        node: {
          type: 'object',
          properties: {
            n: { type: 'integer' },
            children: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
        },
      },
      $ref: '#/$defs/node',
    };
    const text = schemas.accept(tree);
    const deep = { n: 1, children: [{ n: 2, children: [{ n: 3, children: [{ n: 'x' }] }] }] };
    expect(schemas.check(text, deep, 'owner')).toEqual([
      expect.objectContaining({ pointer: '/children/0/children/0/children/0/n', keyword: 'type' }),
    ]);
  });

  it('refuses a pattern of more than SCHEMA_PATTERN_MAX_PROGRAM RE2 instructions', () => {
    for (const schema of [
      { properties: { s: { type: 'string', pattern: widePattern() } } },
      { patternProperties: { [widePattern()]: { type: 'string' } } },
    ]) {
      const refused = refusal(() => unhurried().accept(schema));
      expect(refused.code).toBe('SCHEMA_TOO_COMPLEX');
      expect(refused.detail).toContain('SCHEMA_PATTERN_MAX_PROGRAM');
    }
    unhurried().accept({ properties: { s: { type: 'string', pattern: '^[a-z]{1,1000}$' } } });
  });

  it('checks uniqueItems of 90,000 numbers reading each once, with JSON equality', () => {
    const schemas = unhurried();
    const text = schemas.accept({ properties: { a: { type: 'array', uniqueItems: true } } });
    const numbers = Array.from({ length: 90_000 }, (_, i) => 100_000 + i * 7);
    // Ajv's own keyword compares pairs (quadratic: some 4 billion reads here); this one reads
    // each element once.
    let reads = 0;
    const counted = new Proxy(numbers, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    expect(schemas.check(text, { a: counted }, 'o')).toEqual([]);
    expect(reads).toBeGreaterThanOrEqual(numbers.length);
    expect(reads).toBeLessThanOrEqual(2 * numbers.length);
    const twice = [...numbers, 100_007];
    expect(schemas.check(text, { a: twice }, 'o')).toEqual([
      {
        pointer: '/a',
        keyword: 'uniqueItems',
        message: 'must NOT have duplicate items (items ## 1 and 90000 are identical)',
      },
    ]);
    const same = (a: unknown[]) => schemas.check(text, { a }, 'o').length;
    expect(
      same([
        { x: 1, y: [1, { b: 2, a: 1 }] },
        { y: [1.0, { a: 1, b: 2 }], x: 1 },
      ]),
    ).toBe(1);
    expect(same(['1', 1, [1], { '1': 1 }, null, 'null', true, 'true', [], {}])).toBe(0);
  });

  it('stops checking at SCHEMA_CHECK_MAX_MS with SCHEMA_TOO_COMPLEX, and checks on after', () => {
    const schemas = schemasWith({ schemaCompileMaxMs: 60_000 });
    const text = schemas.accept({
      properties: {
        a: {
          items: {
            allOf: Array.from({ length: 1500 }, (_, i) => ({ type: 'number', minimum: -i })),
          },
        },
      },
    });
    const numbers = Array.from({ length: 10_000 }, (_, i) => i);
    // Unbounded, this check takes seconds: only the budget's stop refuses it.
    const refused = refusal(() => schemas.check(text, { a: numbers }, 'o'));
    expect(refused.code).toBe('SCHEMA_TOO_COMPLEX');
    expect(refused.detail).toContain('SCHEMA_CHECK_MAX_MS');
    expect(schemas.check(text, { a: [1, 2] }, 'o')).toEqual([]);
  });

  it('refuses at PUT a schema that takes more than half of SCHEMA_COMPILE_MAX_MS to compile', () => {
    const wide = {
      properties: Object.fromEntries(
        Array.from({ length: 1500 }, (_, i) => [`p${i}`, { type: 'string' }]),
      ),
    };
    const refused = refusal(() => schemasWith({ schemaCompileMaxMs: 10 }).accept(wide));
    expect(refused.code).toBe('SCHEMA_TOO_COMPLEX');
    expect(refused.detail).toContain('SCHEMA_COMPILE_MAX_MS');
    // The same schema, refused by its time and not by its shape.
    expect(unhurried().accept(wide)).toBe(JSON.stringify(wide));
  });
});

/**
 * Random schemas within the limits (nested objects and arrays, combinators, patterns, uniqueItems,
 * and $defs that refer to one another, fanning out) and random items: whatever the static limits
 * let through compiles and checks an item within BUDGET_MS on this machine (2 shared cores) with
 * the time budgets out of the way. Fixed seed: every run checks the same cases.
 */

describe('a stored schema whose compile ran out of time', () => {
  afterEach(() => jest.useRealTimers());

  it('is refused at once for a minute, then compiled again: a busy moment does not refuse it for good', () => {
    jest.useFakeTimers();
    const wide = {
      properties: Object.fromEntries(
        Array.from({ length: 1500 }, (_, i) => [`p${i}`, { type: 'string' }]),
      ),
    };
    const text = JSON.stringify(wide);
    const schemas = schemasWith({ schemaCompileMaxMs: 2 });
    // The compiles tried: each runs within a budget. (Counting Ajv's own compile calls would
    // rest on luck: a 2 ms budget can run out before the work has reached Ajv.)
    const compile = jest.spyOn(budget, 'withinBudget');
    for (let i = 0; i < 3; i++) {
      const refused = refusal(() => schemas.check(text, { p0: 'x' }, 'owner'));
      expect(refused.code).toBe('SCHEMA_TOO_COMPLEX');
      expect(refused.detail).toContain('SCHEMA_COMPILE_MAX_MS');
    }
    // Tried once; the two writes after it were refused without compiling.
    expect(compile).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(61_000);
    // Tried again, on a fresh Ajv: refused for its time again, not broken by the first stop.
    expect(refusal(() => schemas.check(text, { p0: 'x' }, 'owner')).detail).toContain(
      'SCHEMA_COMPILE_MAX_MS',
    );
    expect(compile).toHaveBeenCalledTimes(2);
    compile.mockRestore();
  });

  it('runs a compile again, on a new Ajv, when it ran out of time while the process had no CPU', () => {
    const wide = {
      properties: Object.fromEntries(
        Array.from({ length: 1500 }, (_, i) => [`p${i}`, { type: 'string' }]),
      ),
    };
    const limits = { ...LIMITS, schemaCompileMaxMs: 20 };
    const schemas = new ItemSchemas({ limits } as unknown as AppConfig);
    const compiles = jest.spyOn(Ajv2020.prototype, 'compile');
    // The process used no CPU meanwhile: the host was busy, not the schema costly.
    const starved = jest.spyOn(process, 'cpuUsage').mockReturnValue({ user: 0, system: 0 });
    try {
      expect(refusal(() => schemas.check(JSON.stringify(wide), {}, 'o')).detail).toContain(
        'SCHEMA_COMPILE_MAX_MS',
      );
      // The first compile and two more, each stopped part-way.
      expect(compiles).toHaveBeenCalledTimes(3);
    } finally {
      starved.mockRestore();
      compiles.mockRestore();
    }
    // Each retry had an Ajv of its own: the one left after the stops still compiles (the budget
    // out of the way, so that only a broken Ajv, not a busy machine, could fail it).
    limits.schemaCompileMaxMs = 60_000;
    const small = JSON.stringify({ properties: { a: { type: 'integer' } } });
    expect(schemas.check(small, { a: 'x' }, 'o')).toEqual([
      expect.objectContaining({ pointer: '/a', keyword: 'type' }),
    ]);
  });

  it('compiles other schemas normally after a compile was stopped part-way', () => {
    // 10,000 properties (the node limit raised for them) take seconds to compile: 150 ms stops
    // each part-way.
    const huge = {
      properties: Object.fromEntries(
        Array.from({ length: 10_000 }, (_, i) => [`p${i}`, { type: 'string' }]),
      ),
    };
    const limits = { ...LIMITS, schemaCompileMaxMs: 150, schemaMaxExpandedNodes: 100_000 };
    const schemas = new ItemSchemas({ limits } as unknown as AppConfig);
    for (let i = 0; i < 3; i++)
      expect(
        refusal(() => schemas.check(JSON.stringify({ ...huge, title: `w${i}` }), {}, 'o')).detail,
      ).toContain('SCHEMA_COMPILE_MAX_MS');
    // The budget out of the way (the limits are read at each compile), so that only a broken
    // Ajv, not a busy machine, could fail the small schema.
    limits.schemaCompileMaxMs = 60_000;
    const small = JSON.stringify({ properties: { a: { type: 'integer' } } });
    expect(schemas.check(small, { a: 1 }, 'o')).toEqual([]);
    expect(schemas.check(small, { a: 'x' }, 'o')).toEqual([
      expect.objectContaining({ pointer: '/a', keyword: 'type' }),
    ]);
  });
});
