import fc from 'fast-check';
import type { DomainError } from '../../../common/errors';
import { LIMITS, unhurried } from './item-schemas.fixture';

describe('compile + check of random schemas within the limits', () => {
  /** Documented in docs/data.md, with the worst case seen. */
  const BUDGET_MS = LIMITS.schemaCompileMaxMs;
  type Schema = Record<string, unknown>;
  const DEFS = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6'];
  const ref = (from: number) =>
    fc
      .integer({ min: from + 1, max: DEFS.length })
      .map((i) => (i === DEFS.length ? {} : { $ref: `#/$defs/${DEFS[i]}` }));
  const leaf: fc.Arbitrary<Schema> = fc.oneof(
    fc.record(
      {
        type: fc.constant('string'),
        maxLength: fc.integer({ min: 0, max: 50 }),
        pattern: fc.constantFrom('^[a-c]*$', '(ab|cd)+', '^\\w{0,100}$', 'x{2,30}y'),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record(
      { type: fc.constantFrom('integer', 'number'), minimum: fc.integer({ min: -5, max: 5 }) },
      { requiredKeys: ['type'] },
    ),
    fc.record(
      {
        type: fc.constant('array'),
        uniqueItems: fc.boolean(),
        maxItems: fc.integer({ min: 0, max: 50 }),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({
      enum: fc.uniqueArray(fc.constantFrom('x', 'y', 1, 2, true, null), { minLength: 1 }),
    }),
  );
  /** A schema of $def `at`: it may refer only to later $defs (no cycle that does not go down). */
  const schemaOf = (at: number): fc.Arbitrary<Schema> =>
    fc.letrec<{ node: Schema }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        ref(at),
        fc.record({
          allOf: fc.array(fc.oneof(ref(at), tie('node')), { minLength: 1, maxLength: 6 }),
        }),
        fc.record({ anyOf: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }),
        fc.record({
          type: fc.constant('object'),
          properties: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('node'), {
            maxKeys: 4,
          }),
          additionalProperties: fc.oneof(fc.boolean(), tie('node')),
        }),
        fc.record({ type: fc.constant('array'), items: tie('node'), uniqueItems: fc.boolean() }),
      ),
    })).node;
  /** A $def: a schema, or an allOf of references to later ones (fanning out). */
  const defOf = (at: number): fc.Arbitrary<Schema> =>
    fc.oneof(schemaOf(at), fc.record({ allOf: fc.array(ref(at), { minLength: 2, maxLength: 8 }) }));
  const schema = fc.tuple(schemaOf(-1), ...DEFS.map((_, i) => defOf(i))).map(([root, ...defs]) => ({
    allOf: [{ $ref: '#/$defs/d0' }, root],
    $defs: Object.fromEntries(defs.map((d, k) => [DEFS[k], d])),
  }));
  const item = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.jsonValue({ maxDepth: 4 }), {
    maxKeys: 4,
  });

  it(`compiles and checks each within ${BUDGET_MS} ms`, () => {
    const schemas = unhurried();
    let worst = 0;
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(schema, fc.array(item, { minLength: 1, maxLength: 5 }), (s, items) => {
        const start = performance.now();
        let text: string;
        try {
          text = schemas.accept(s);
        } catch (error) {
          // Only what a static limit names: a time budget never decides here.
          expect((error as DomainError).code).toBe('SCHEMA_TOO_COMPLEX');
          expect((error as DomainError).message).toContain('SCHEMA_MAX_EXPANDED_NODES');
          refused += 1;
          return;
        }
        for (const one of items) schemas.check(text, one, 'owner');
        const spent = performance.now() - start;
        accepted += 1;
        worst = Math.max(worst, spent);
        expect(spent).toBeLessThan(BUDGET_MS);
      }),
      { seed: 44, numRuns: 50 },
    );
    // Both sides of the limit were tried.
    expect(accepted).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(0);
    console.log(`accepted ${accepted}, refused ${refused}, worst ${worst.toFixed(1)} ms`);
  });
});
