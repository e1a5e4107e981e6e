import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { createTestApp, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';

/**
 * The service accepts exactly the items Ajv accepts: random schemas from a small generator
 * (types, bounds, enums, required, additionalProperties, patterns, formats, nested objects and
 * arrays, combinators) and random items the service's own item rules allow, on POST and on PUT
 * (the item as the update leaves it). The reference is a plain Ajv 2020 with ajv-formats and
 * JavaScript regular expressions; the generated patterns mean the same in RE2. Fixed seed:
 * every run checks the same cases.
 */
let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp(__filename);
  user = await createUser(t);
});
afterAll(async () => t.close());

const KEYS = ['a', 'b', 'c', 'd'];
const key = fc.constantFrom(...KEYS);

type Schema = Record<string, unknown>;

const numberSchema: fc.Arbitrary<Schema> = fc.record(
  {
    type: fc.constantFrom('integer', 'number'),
    minimum: fc.integer({ min: -5, max: 5 }),
    exclusiveMaximum: fc.integer({ min: 0, max: 20 }),
    multipleOf: fc.constantFrom(1, 2, 0.5),
  },
  { requiredKeys: ['type'] },
);
const stringSchema: fc.Arbitrary<Schema> = fc.record(
  {
    type: fc.constant('string'),
    minLength: fc.integer({ min: 0, max: 3 }),
    maxLength: fc.integer({ min: 2, max: 6 }),
    pattern: fc.constantFrom('^[a-c]*$', '^x', '[0-9]', '^(ab|cd)+$', '^\\w+$'),
    format: fc.constantFrom('date-time', 'email', 'uuid', 'date', 'ipv4'),
  },
  { requiredKeys: ['type'] },
);
const leafSchema: fc.Arbitrary<Schema> = fc.oneof(
  numberSchema,
  stringSchema,
  fc.constant({ type: 'boolean' }),
  fc.constant({ type: 'null' }),
  fc.record({
    enum: fc.uniqueArray(fc.constantFrom('x', 'y', 1, 2, true, null), { minLength: 1 }),
  }),
  fc.record({ const: fc.constantFrom('x', 0, false) }),
);

const { schema } = fc.letrec<{ schema: Schema; object: Schema }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafSchema,
    tie('object'),
    fc.record(
      {
        type: fc.constant('array'),
        items: tie('schema'),
        maxItems: fc.integer({ min: 0, max: 3 }),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({ anyOf: fc.array(tie('schema'), { minLength: 1, maxLength: 2 }) }),
    fc.record({ not: leafSchema }),
  ),
  object: fc.record(
    {
      type: fc.constant('object'),
      properties: fc.dictionary(key, tie('schema'), { maxKeys: 3 }),
      required: fc.uniqueArray(key, { maxLength: 2 }),
      additionalProperties: fc.boolean(),
      minProperties: fc.integer({ min: 0, max: 2 }),
    },
    { requiredKeys: ['type'] },
  ),
}));

const scalar = fc.oneof(
  fc.constantFrom('x', 'y', 'ab', 'abcd', 'x1', '', 'a@b.io', '2026-01-02T03:04:05Z', '2026-01-02'),
  fc.constantFrom('6f9619ff-8b86-4d11-b42d-00c04fc964ff', '10.0.0.1', 'cdcd'),
  fc.integer({ min: -6, max: 25 }),
  fc.constantFrom(0.5, 1.5, -2.5),
  fc.boolean(),
  fc.constant(null),
);
/** JSON values the service stores: no array directly inside an array. */
const { value } = fc.letrec<{ value: unknown; element: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    tie('element'),
    fc.array(tie('element'), { maxLength: 4 }),
  ),
  element: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
  ),
}));
const item = fc.dictionary(key, value, { maxKeys: 4 });

/** The whole item's schema: an object schema at the top, as a collection's must be. */
const itemSchema = fc.tuple(
  fc.dictionary(key, schema, { maxKeys: 4 }),
  fc.uniqueArray(key, { maxLength: 2 }),
  fc.boolean(),
);

function reference(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv;
}

let round = 0;

it('accepts exactly the items Ajv accepts, on POST and on PUT', async () => {
  const ajv = reference();
  let accepted = 0;
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(itemSchema, item, async ([properties, required, closed], candidate) => {
      round += 1;
      const collection = `p${round}`;
      const document = { type: 'object', properties, required, additionalProperties: !closed };
      const expected = ajv.validate(document, candidate);
      // PUT: an empty item stored before the schema, then updated to the candidate.
      await t
        .http()
        .post(`/data/${collection}`)
        .set('X-Api-Key', user.apiKey)
        .send({ item: { _id: 'base' } })
        .expect(200);
      const put = await t
        .http()
        .put(`/data/${collection}/schema`)
        .set('X-Api-Key', user.apiKey)
        .send({ schema: document });
      expect(put.status).toBe(200);
      const created = await t
        .http()
        .post(`/data/${collection}`)
        .set('X-Api-Key', user.apiKey)
        .send({ item: candidate });
      expect({ status: created.status, item: candidate }).toEqual({
        status: expected ? 200 : 422,
        item: candidate,
      });
      const updated = await t
        .http()
        .put(`/data/${collection}/_id/base`)
        .set('X-Api-Key', user.apiKey)
        .send({ values: candidate });
      // An empty update is refused by the API whatever the schema says.
      if (Object.keys(candidate).length > 0)
        expect({ status: updated.status, item: candidate }).toEqual({
          status: expected ? 200 : 422,
          item: candidate,
        });
      if (expected) accepted += 1;
      else refused += 1;
    }),
    { seed: 20261126, numRuns: 100 },
  );
  // The generator reaches both sides.
  expect(accepted).toBeGreaterThan(5);
  expect(refused).toBeGreaterThan(5);
});
