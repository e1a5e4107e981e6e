import fc from 'fast-check';
import { MongoClient } from 'mongodb';
import { TEST_ADMIN_KEY, testDatabaseUri, uniqueDbName } from '../support/app';
import { startService, type Reply, type ServiceProcess } from '../support/service-process';

/**
 * Property: whatever a collection's access rules (own, all, none, filters with the caller's
 * constants, protected fields), whatever its items and whoever calls — a root key, three sub keys
 * of two clients, a publishable key — through either of two instances on one database, every
 * answer of every read and write path equals an in-memory model's: the status, the set of items,
 * and their fields (protected ones left out). The model is written from the rules as docs/data.md
 * states them, not from the service's code.
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 10);
const OPERATIONS = 14;
const REGISTRY_CACHE_MS = 150;
const ORIGIN = 'https://shop.example';
const dbName = uniqueDbName(__filename);
let a: ServiceProcess;
let b: ServiceProcess;

// ---- the model -------------------------------------------------------------------------------

const FIELDS = ['userId', 'tag', 'n', 'app', 'cost', 'note'] as const;
type Item = Partial<Record<(typeof FIELDS)[number], string | number>> & { _id: string };

type Rule = 'own' | 'all' | 'none' | { filter: Record<string, unknown> };
interface Rules {
  sub: { read: Rule; create: Rule; update: Rule; delete: Rule };
  public: { read: Rule };
  protectedFields: { sub: string[]; public: string[] };
}

interface Caller {
  name: string;
  kind: 'root' | 'sub' | 'public';
  key: string;
  accountId?: string;
  clientId?: string;
}

const ACCOUNTS = ['acct-a1', 'acct-a2', 'acct-b1'] as const;
const RULE_FILTERS: Rule[] = [
  { filter: { tag: 'red' } },
  { filter: { n: { lt: 5 } } },
  { filter: { app: '$caller.clientId' } },
  { filter: { userId: '$caller.accountId', tag: 'blue' } },
];

function bound(value: unknown, caller: Caller): unknown {
  if (value === '$caller.accountId') return caller.accountId;
  if (value === '$caller.clientId') return caller.clientId;
  return value;
}

/** Whether `item` is inside `rule` for `caller`, as docs/data.md defines the rule language. */
function inside(rule: Rule, item: Item, caller: Caller): boolean {
  if (caller.kind === 'root') return true;
  if (rule === 'all') return true;
  if (rule === 'none') return false;
  if (rule === 'own') return caller.accountId !== undefined && item.userId === caller.accountId;
  return Object.entries(rule.filter).every(([field, condition]) => {
    const value = item[field as keyof Item];
    if (condition !== null && typeof condition === 'object') {
      const lt = (condition as { lt: number }).lt;
      return typeof value === 'number' && value < lt;
    }
    const wanted = bound(condition, caller);
    // A caller constant the caller lacks (a publishable key) matches nothing.
    return wanted !== undefined && value === wanted;
  });
}

function ruleOf(rules: Rules, caller: Caller, op: 'read' | 'create' | 'update' | 'delete'): Rule {
  if (caller.kind === 'public') return op === 'read' ? rules.public.read : 'none';
  return rules.sub[op];
}

function hiddenOf(rules: Rules, caller: Caller): string[] {
  if (caller.kind === 'root') return [];
  return caller.kind === 'sub' ? rules.protectedFields.sub : rules.protectedFields.public;
}

/** The item as the caller receives it: its client fields without the protected ones. */
function seen(item: Item, rules: Rules, caller: Caller): Record<string, unknown> {
  const hidden = hiddenOf(rules, caller);
  const out: Record<string, unknown> = { _id: item._id };
  for (const field of FIELDS)
    if (item[field] !== undefined && !hidden.includes(field)) out[field] = item[field];
  return out;
}

function clientFields(body: unknown): Record<string, unknown> {
  const record = body as Record<string, unknown>;
  const out: Record<string, unknown> = { _id: record._id };
  for (const field of FIELDS) if (record[field] !== undefined) out[field] = record[field];
  // A protected field must not come back at all, under any name.
  for (const key of Object.keys(record))
    if (!key.startsWith('_') && !(FIELDS as readonly string[]).includes(key))
      out[key] = record[key];
  return out;
}

// ---- generators ------------------------------------------------------------------------------

const ruleArb = fc.constantFrom<Rule>('own', 'all', 'none', ...RULE_FILTERS);
const publicRuleArb = fc.constantFrom<Rule>('all', 'none', RULE_FILTERS[0]!, RULE_FILTERS[2]!);
const hiddenArb = fc.subarray(['cost', 'note']);
const rulesArb: fc.Arbitrary<Rules> = fc.record({
  sub: fc.record({ read: ruleArb, create: ruleArb, update: ruleArb, delete: ruleArb }),
  public: fc.record({ read: publicRuleArb }),
  protectedFields: fc.record({ sub: hiddenArb, public: hiddenArb }),
});
const fieldsArb = fc.record(
  {
    userId: fc.constantFrom(...ACCOUNTS),
    tag: fc.constantFrom('red', 'blue'),
    n: fc.integer({ min: 0, max: 9 }),
    app: fc.constantFrom('app-a', 'app-b'),
    cost: fc.integer({ min: 1, max: 999 }),
    note: fc.constantFrom('a', 'b'),
  },
  { requiredKeys: ['tag', 'n'] },
);
type Values = Partial<Record<'tag' | 'n' | 'app' | 'cost' | 'note', string | number>>;
const valuesArb: fc.Arbitrary<Values> = fc
  .record(
    {
      tag: fc.constantFrom('red', 'blue'),
      n: fc.integer({ min: 0, max: 9 }),
      app: fc.constantFrom('app-a', 'app-b'),
      cost: fc.integer({ min: 1, max: 999 }),
      note: fc.constantFrom('a', 'b'),
    },
    { requiredKeys: [] },
  )
  .filter((values) => Object.keys(values).length > 0);

type Operation =
  | { op: 'get'; caller: number; item: number; via: number }
  | { op: 'list'; caller: number; tag: 'red' | 'blue' | null; via: number }
  | { op: 'count'; caller: number; via: number }
  | { op: 'aggregate'; caller: number; via: number }
  | { op: 'create'; caller: number; fields: Values; via: number }
  | { op: 'update'; caller: number; item: number; values: Values; via: number }
  | { op: 'delete'; caller: number; item: number; via: number };

const callerArb = fc.integer({ min: 0, max: 4 });
const viaArb = fc.integer({ min: 0, max: 1 });
const itemArb = fc.integer({ min: 0, max: 11 });
const operationArb: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constant('get' as const), caller: callerArb, item: itemArb, via: viaArb }),
  fc.record({
    op: fc.constant('list' as const),
    caller: callerArb,
    tag: fc.constantFrom<'red' | 'blue' | null>('red', 'blue', null),
    via: viaArb,
  }),
  fc.record({ op: fc.constant('count' as const), caller: callerArb, via: viaArb }),
  fc.record({ op: fc.constant('aggregate' as const), caller: callerArb, via: viaArb }),
  fc.record({
    op: fc.constant('create' as const),
    caller: callerArb,
    fields: valuesArb,
    via: viaArb,
  }),
  fc.record({
    op: fc.constant('update' as const),
    caller: callerArb,
    item: itemArb,
    values: valuesArb,
    via: viaArb,
  }),
  fc.record({ op: fc.constant('delete' as const), caller: callerArb, item: itemArb, via: viaArb }),
);

// ---- the service -----------------------------------------------------------------------------

const bodyOf = (reply: Reply): unknown => (reply.body ? (JSON.parse(reply.body) as unknown) : null);
const codeOf = (reply: Reply): unknown => (bodyOf(reply) as { code?: unknown } | null)?.code;

let root: Caller;
let subs: Caller[] = [];

async function call(
  via: number,
  caller: Caller,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply> {
  const instance = via === 0 ? a : b;
  const headers: Record<string, string> = { 'X-Api-Key': caller.key };
  if (caller.kind === 'public') headers.Origin = ORIGIN;
  return instance.send(method, path, headers, body);
}

beforeAll(async () => {
  const env = { MONGODB_DB_NAME: dbName, REGISTRY_CACHE_MS: String(REGISTRY_CACHE_MS) };
  [a, b] = await Promise.all([startService(env), startService(env)]);
  const user = await a.send(
    'POST',
    '/admin/users',
    { 'X-Api-Key': TEST_ADMIN_KEY },
    {
      email: `access-model-${Date.now()}@example.com`,
    },
  );
  expect(user.status).toBe(200);
  const made = bodyOf(user) as { apiKey: string; profile: { subject: string } };
  root = { name: 'root', kind: 'root', key: made.apiKey, accountId: made.profile.subject };
  const clients = { 'acct-a1': 'app-a', 'acct-a2': 'app-a', 'acct-b1': 'app-b' } as const;
  subs = [];
  for (const accountId of ACCOUNTS) {
    const clientId = clients[accountId];
    const profile = await call(0, root, 'POST', '/profile', {
      accountId,
      clientId,
      email: `${accountId}@example.com`,
    });
    expect(profile.status).toBe(200);
    const key = await call(0, root, 'POST', '/api-keys', { clientId, accountId });
    expect(key.status).toBe(200);
    subs.push({
      name: accountId,
      kind: 'sub',
      key: (bodyOf(key) as { apiKey: string }).apiKey,
      accountId,
      clientId,
    });
  }
}, 180_000);

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  const client = new MongoClient(testDatabaseUri());
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let runs = 0;

it('answers every caller on every path as the model of its rules does, through two instances', async () => {
  await fc.assert(
    fc.asyncProperty(
      rulesArb,
      fc.array(fieldsArb, { minLength: 4, maxLength: 8 }),
      fc.array(operationArb, { minLength: OPERATIONS, maxLength: OPERATIONS }),
      async (rules, seeds, operations) => {
        runs += 1;
        const collection = `am-${runs}-${Date.now().toString(36)}`;
        const put = await call(0, root, 'PUT', `/data/${collection}/access`, rules);
        expect(put.status).toBe(200);
        const minted = await call(0, root, 'POST', '/api-keys', {
          kind: 'publishable',
          collections: [collection],
          allowedOrigins: [ORIGIN],
        });
        expect(minted.status).toBe(200);
        const publishable: Caller = {
          name: 'publishable',
          kind: 'public',
          key: (bodyOf(minted) as { apiKey: string }).apiKey,
        };
        const callers = [root, ...subs, publishable];
        const model = new Map<string, Item>();
        const ids: string[] = [];
        for (const seed of seeds) {
          const made = await call(0, root, 'POST', `/data/${collection}`, { item: seed });
          expect(made.status).toBe(200);
          const id = (bodyOf(made) as { _id: string })._id;
          // A root create stamps the owner field when the item lacks it.
          model.set(id, { userId: root.accountId, ...seed, _id: id });
          ids.push(id);
        }
        // Both instances read the rules afresh.
        await sleep(REGISTRY_CACHE_MS * 2);
        const readable = (caller: Caller) =>
          [...model.values()].filter((item) => inside(ruleOf(rules, caller, 'read'), item, caller));
        const idOf = (at: number) => ids[at % ids.length] ?? 'missing';

        for (const operation of operations) {
          const caller = callers[operation.caller]!;
          const context = `${JSON.stringify(rules)} ${caller.name} ${JSON.stringify(operation)}`;
          switch (operation.op) {
            case 'get': {
              const id = idOf(operation.item);
              const reply = await call(
                operation.via,
                caller,
                'GET',
                `/data/${collection}/_id/${id}`,
              );
              const item = model.get(id);
              const visible = item && inside(ruleOf(rules, caller, 'read'), item, caller);
              expect({ context, status: reply.status }).toEqual({
                context,
                status: visible ? 200 : 404,
              });
              if (visible) expect(clientFields(bodyOf(reply))).toEqual(seen(item, rules, caller));
              break;
            }
            case 'list': {
              const query = operation.tag ? `tag=${operation.tag}&` : '';
              const reply = await call(
                operation.via,
                caller,
                'GET',
                `/data/${collection}?${query}limit=100`,
              );
              expect({ context, status: reply.status === 204 ? 200 : reply.status }).toEqual({
                context,
                status: 200,
              });
              const expected = readable(caller)
                .filter((item) => operation.tag === null || item.tag === operation.tag)
                .sort((x, y) => (x._id < y._id ? -1 : 1))
                .map((item) => seen(item, rules, caller));
              const got = (reply.status === 204 ? [] : (bodyOf(reply) as unknown[]))
                .map(clientFields)
                .sort((x, y) => (String(x._id) < String(y._id) ? -1 : 1));
              expect({ context, items: got }).toEqual({
                context,
                items: expected,
              });
              break;
            }
            case 'count': {
              const reply = await call(operation.via, caller, 'GET', `/data/${collection}/count`);
              expect({ context, status: reply.status, body: bodyOf(reply) }).toEqual({
                context,
                status: 200,
                body: { count: readable(caller).length },
              });
              break;
            }
            case 'aggregate': {
              const reply = await call(
                operation.via,
                caller,
                'GET',
                `/data/${collection}/aggregate?groupBy=tag&op=count`,
              );
              expect({ context, status: reply.status }).toEqual({ context, status: 200 });
              const groups = new Map<unknown, number>();
              for (const item of readable(caller))
                groups.set(item.tag ?? null, (groups.get(item.tag ?? null) ?? 0) + 1);
              const got = new Map(
                ((bodyOf(reply) as { groups: { key: unknown; value: number }[] }).groups ?? []).map(
                  (g) => [g.key, g.value] as const,
                ),
              );
              expect({ context, groups: got }).toEqual({ context, groups });
              break;
            }
            case 'create': {
              const fields: Values & { userId?: string } = { ...operation.fields };
              const reply = await call(operation.via, caller, 'POST', `/data/${collection}`, {
                item: fields,
              });
              // A sub key's item is its own; a root's gets its subject when it names no owner.
              const after: Item =
                caller.kind === 'sub'
                  ? { ...fields, userId: caller.accountId, _id: '' }
                  : { userId: caller.accountId, ...fields, _id: '' };
              const hidden = hiddenOf(rules, caller);
              const allowed =
                caller.kind === 'root' ||
                (caller.kind === 'sub' &&
                  !Object.keys(fields).some((f) => hidden.includes(f)) &&
                  inside(ruleOf(rules, caller, 'create'), after, caller));
              expect({ context, status: reply.status }).toEqual({
                context,
                status: allowed ? 200 : 403,
              });
              if (allowed) {
                const id = (bodyOf(reply) as { _id: string })._id;
                const item = { ...after, _id: id };
                model.set(id, item);
                ids.push(id);
                expect(clientFields(bodyOf(reply))).toEqual(seen(item, rules, caller));
              } else if (caller.kind === 'sub') {
                expect({ context, code: codeOf(reply) }).toEqual({ context, code: 'ACCESS_RULE' });
              }
              break;
            }
            case 'update': {
              const id = idOf(operation.item);
              const reply = await call(
                operation.via,
                caller,
                'PUT',
                `/data/${collection}/_id/${id}`,
                { values: operation.values },
              );
              const before = model.get(id);
              const after = before && { ...before, ...operation.values };
              const hidden = hiddenOf(rules, caller);
              let status: number;
              if (caller.kind === 'public') status = 403;
              else if (Object.keys(operation.values).some((f) => hidden.includes(f))) status = 403;
              else if (!before || !inside(ruleOf(rules, caller, 'read'), before, caller))
                status = 404;
              else if (
                !inside(ruleOf(rules, caller, 'update'), before, caller) ||
                !inside(ruleOf(rules, caller, 'update'), after!, caller)
              )
                status = 403;
              else status = 200;
              expect({ context, status: reply.status }).toEqual({ context, status });
              if (status === 200) {
                model.set(id, after!);
                expect(clientFields(bodyOf(reply))).toEqual(seen(after!, rules, caller));
              }
              break;
            }
            case 'delete': {
              const id = idOf(operation.item);
              const reply = await call(
                operation.via,
                caller,
                'DELETE',
                `/data/${collection}/_id/${id}`,
              );
              const before = model.get(id);
              let status: number;
              if (caller.kind === 'public') status = 403;
              else if (!before || !inside(ruleOf(rules, caller, 'read'), before, caller))
                status = 404;
              else if (!inside(ruleOf(rules, caller, 'delete'), before, caller)) status = 403;
              else status = 204;
              expect({ context, status: reply.status }).toEqual({ context, status });
              if (status === 204) model.delete(id);
              break;
            }
          }
        }
      },
    ),
    { numRuns: RUNS },
  );
}, 300_000);
