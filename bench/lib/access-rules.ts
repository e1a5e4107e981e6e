// The access-rules comparison's set-up: one sub key, and two collections holding the same items,
// owned by it — one with the defaults (a sub key reads its own items), one whose read rule is a
// filter with a caller constant. Both answer the sub key the same items, so the two variants
// differ only by the rule the service applies.
import { isArray, prop } from './api';
import type { Ask } from './comparisons';

/** Items per collection: small, as the other comparisons' collections. */
const ITEMS = 200;

export interface AccessBench {
  /** The sub key both variants read with. */
  key: string;
  plain: { name: string; ids: string[] };
  ruled: { name: string; ids: string[] };
}

/** The rule of the ruled collection: the sub key's own items that are published. */
export const BENCH_READ_RULE = { filter: { userId: '$caller.accountId', published: true } };

async function fill(ask: Ask, name: string, key: string): Promise<string[] | string> {
  const ids: string[] = [];
  for (let at = 0; at < ITEMS; at += 100) {
    const items = Array.from({ length: Math.min(100, ITEMS - at) }, (_, i) => ({
      n: at + i,
      group: `g${(at + i) % 10}`,
      published: true,
    }));
    const made = await ask('service', 'POST', `/data/${name}/bulk`, {
      body: { items },
      headers: { 'x-api-key': key },
      keyless: true,
    });
    const results = prop(made.body, 'results');
    if (made.status !== 200 || !isArray(results))
      return `POST /data/${name}/bulk answered ${made.status}`;
    for (const result of results) {
      const id = prop(result, '_id');
      if (typeof id !== 'string') return `POST /data/${name}/bulk did not name an _id`;
      ids.push(id);
    }
  }
  return ids;
}

/** Makes the sub key and both collections; a string says why it could not. */
export async function prepareAccessBench(ask: Ask, runTag: string): Promise<AccessBench | string> {
  const accountId = `bench-access-${runTag}`;
  const profile = await ask('service', 'POST', '/profile', {
    body: { accountId, clientId: 'bench-app', email: `${accountId}@example.com` },
  });
  if (profile.status !== 200 && profile.status !== 201)
    return `POST /profile (a sub profile) answered ${profile.status}`;
  const made = await ask('service', 'POST', '/api-keys', {
    body: { name: 'bench-sub', clientId: 'bench-app', accountId },
  });
  const key = prop(made.body, 'apiKey');
  if (made.status !== 200 || typeof key !== 'string')
    return `POST /api-keys (a sub key) answered ${made.status}`;
  const plain = `bench-access-plain-${runTag}`;
  const ruled = `bench-access-ruled-${runTag}`;
  const rules = await ask('service', 'PUT', `/data/${ruled}/access`, {
    body: { sub: { read: BENCH_READ_RULE } },
  });
  if (rules.status !== 200) return `PUT /data/{c}/access answered ${rules.status}`;
  const plainIds = await fill(ask, plain, key);
  if (typeof plainIds === 'string') return plainIds;
  const ruledIds = await fill(ask, ruled, key);
  if (typeof ruledIds === 'string') return ruledIds;
  // The rule is in force: an item the sub key does not own is not read through it.
  const foreign = await ask('service', 'POST', `/data/${ruled}`, {
    body: { item: { n: -1, published: true } },
  });
  const foreignId = prop(foreign.body, '_id');
  if (typeof foreignId !== 'string') return `the root's POST answered ${foreign.status}`;
  const hidden = await ask('service', 'GET', `/data/${ruled}/_id/${foreignId}`, {
    headers: { 'x-api-key': key },
    keyless: true,
  });
  if (hidden.status !== 404)
    return `an item outside the rule answered ${hidden.status} to the sub key, not 404`;
  return { key, plain: { name: plain, ids: plainIds }, ruled: { name: ruled, ids: ruledIds } };
}
