// What a collection's JSON Schema costs a create: POST /data/{c} of the same 20-field item to a
// collection whose schema describes all 20 fields (enforced, action "error") and to one without a
// schema, on the service, judged like the other comparisons by the service's CPU per request.
// Part of every comparisons run; `npm run bench -- --schema-only` runs it alone.
import { prop } from './api';
import { PAYLOAD } from './seed';
import { cpuRatioCheck, type Comparison } from './comparisons';
import type { ScenarioRequest } from './scenarios';

/** A 20-property schema may add less than this share of service CPU per POST (issue: +15 %). */
export const SCHEMA_CPU_MAX = 0.15;

/** Two fresh collections, alike but for the schema: neither has an index or other items. */
const WITH_SCHEMA = 'bench_schema';
const WITHOUT_SCHEMA = 'bench_schema_none';

const string = { type: 'string' };
const integer = (minimum: number, maximum?: number) => ({
  type: 'integer',
  minimum,
  ...(maximum !== undefined ? { maximum } : {}),
});

/** Twenty required properties of the usual kinds, nothing else allowed. */
export const BENCH_SCHEMA = {
  type: 'object',
  properties: {
    sku: { type: 'string', maxLength: 100 },
    n: integer(0),
    status: { enum: ['open', 'closed', 'posted'] },
    group: string,
    payload: { type: 'string', maxLength: 200 },
    title: { type: 'string', minLength: 1, maxLength: 100 },
    qty: integer(0, 1_000_000),
    price: { type: 'number', minimum: 0 },
    active: { type: 'boolean' },
    tags: { type: 'array', items: string, maxItems: 10 },
    rating: { type: 'number', minimum: 0, maximum: 5 },
    code: { type: 'string', pattern: '^[A-Z]{2}-[0-9]+$' },
    owner: string,
    note: { type: ['string', 'null'] },
    priority: integer(1, 5),
    ratio: { type: 'number' },
    archived: { type: 'boolean' },
    category: { enum: ['a', 'b', 'c'] },
    size: {
      type: 'object',
      properties: { w: { type: 'number' }, h: { type: 'number' } },
      required: ['w', 'h'],
      additionalProperties: false,
    },
    version: integer(1),
  },
  required: [] as string[],
  additionalProperties: false,
};
BENCH_SCHEMA.required = Object.keys(BENCH_SCHEMA.properties);

/** An item with all twenty fields; `%SEQ%` makes its sku and `n` unique per request. */
function benchItem(sku: string): Record<string, unknown> {
  return {
    sku,
    n: '%SEQ%',
    status: 'open',
    group: 'posted',
    payload: PAYLOAD,
    title: 'A benchmark item',
    qty: 3,
    price: 42.5,
    active: true,
    tags: ['a', 'b', 'c'],
    rating: 4.5,
    code: 'AB-1234',
    owner: 'bench',
    note: null,
    priority: 2,
    ratio: 0.25,
    archived: false,
    category: 'b',
    size: { w: 10, h: 20 },
    version: 1,
  };
}

function post(collection: string, skuPrefix: string): ScenarioRequest {
  const sku = `${skuPrefix}-%SEQ%`;
  return {
    method: 'POST',
    paths: [`/data/${collection}`],
    body: JSON.stringify({ item: benchItem(sku) }).replace('"%SEQ%"', '%SEQ%'),
    verify: (res) =>
      prop(res.body, 'sku') === sku.replace('%SEQ%', '0') && prop(res.body, 'version') === 1
        ? undefined
        : 'expected the stored item',
  };
}

export const schemaComparison: Comparison = {
  id: 'schema',
  title: 'JSON Schema: POST a 20-field item to a collection with a 20-property schema vs without',
  route: 'POST /data/{c}',
  variants: [
    {
      id: 'schema',
      label: '20-property schema',
      target: 'service',
      request: ({ runTag }) => post(WITH_SCHEMA, `schema-${runTag}`),
    },
    {
      id: 'plain',
      label: 'no schema',
      target: 'service',
      request: ({ runTag }) => post(WITHOUT_SCHEMA, `plain-${runTag}`),
    },
  ],
  async prepare(ask, { runTag }) {
    // Both collections exist before the load, so neither variant pays for a first write.
    for (const collection of [WITH_SCHEMA, WITHOUT_SCHEMA]) {
      const created = await ask('service', 'POST', `/data/${collection}`, {
        body: { item: { ...benchItem(`setup-${runTag}`), n: 0 } },
      });
      if (created.status !== 200)
        return { missing: `POST /data/${collection} answered ${created.status}` };
    }
    const set = await ask('service', 'PUT', `/data/${WITH_SCHEMA}/schema`, {
      body: { schema: BENCH_SCHEMA, action: 'error' },
    });
    if (set.status !== 200)
      return {
        missing: `PUT /data/{c}/schema answered ${set.status}${set.status === 404 ? ' (no schema routes in this build)' : `: ${String(prop(set.body, 'detail'))}`}`,
      };
    // The schema must be enforced, or the comparison would measure nothing.
    const wrong = await ask('service', 'POST', `/data/${WITH_SCHEMA}`, {
      body: { item: { ...benchItem(`wrong-${runTag}`), n: 0, priority: 'high' } },
    });
    if (wrong.status !== 422 || prop(wrong.body, 'code') !== 'SCHEMA_VIOLATION')
      return {
        missing: `an item that breaks the schema answered ${wrong.status}, not 422 SCHEMA_VIOLATION`,
      };
    return {};
  },
  checks: (totals) => [
    cpuRatioCheck(
      `A 20-property JSON Schema adds < ${SCHEMA_CPU_MAX * 100} % service CPU per POST`,
      1 + SCHEMA_CPU_MAX,
      totals('schema'),
      totals('plain'),
    ),
  ],
};
