/**
 * The principals the contract run fuzzes with, and data for them to address, made through the
 * API as a client would. The fixed names below are also the values of the dictionaries in
 * schemathesis.toml, so that generated requests reach existing resources as well as missing ones.
 */
export const SEED = {
  subject: 'contract-root',
  email: 'contract-root@example.com',
  clientId: 'contract-client',
  accountId: 'contract-account',
  collection: 'notes',
  indexedField: 'n',
  itemIds: { root: 'note-root', team: 'note-team', sub: 'note-sub' },
} as const;

export type PrincipalKind = 'operator' | 'root' | 'team' | 'sub';

export interface Principals {
  operator: string;
  root: string;
  team: string;
  sub: string;
}

interface Reply {
  status: number;
  body: unknown;
}

async function call(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      'X-Api-Key': key,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** Uploads a small text file as `key` (a raw body): its id, for the fuzzer to address. */
async function uploadFile(url: string, key: string, name: string): Promise<string> {
  const res = await fetch(`${url}/files?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { 'X-Api-Key': key, 'Content-Type': 'text/plain' },
    body: `contract file ${name}`,
    signal: AbortSignal.timeout(15_000),
  });
  const body = (await res.json()) as { id?: string };
  if (res.status !== 201 || typeof body.id !== 'string')
    throw new Error(`setup: POST /files answered ${res.status}: ${JSON.stringify(body)}`);
  return body.id;
}

/** The call must succeed; the setup is not what is under test, so any failure stops the run. */
async function expectOk<T>(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const reply = await call(url, key, method, path, body);
  if (reply.status < 200 || reply.status >= 300) {
    throw new Error(
      `setup: ${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.body)}`,
    );
  }
  return reply.body as T;
}

interface IssuedKey {
  apiKey: string;
}

/**
 * A root user with a sub profile and plans, a team with the root user as admin member, and for
 * each a project, items and an index. The team id is what the root run sends as X-Team.
 */
export async function seed(
  url: string,
  operatorKey: string,
): Promise<{ principals: Principals; teamId: string; fileIds: string[] }> {
  const { subject, email, clientId, accountId, collection, indexedField, itemIds } = SEED;
  const root = (
    await expectOk<IssuedKey>(url, operatorKey, 'POST', '/admin/users', { email, subject })
  ).apiKey;
  await expectOk(url, operatorKey, 'PUT', `/admin/users/${subject}/plans`, [
    { planName: 'pro', since: '2026-01-01T00:00:00Z', until: '2027-01-01T00:00:00Z' },
  ]);
  const created = await expectOk<IssuedKey & { team: { id: string } }>(
    url,
    operatorKey,
    'POST',
    '/admin/teams',
    { name: 'Contract team' },
  );
  const team = created.apiKey;
  const teamId = created.team.id;
  await expectOk(url, operatorKey, 'PUT', `/admin/teams/${teamId}/members/${subject}`, {
    role: 'admin',
  });

  await expectOk(url, root, 'POST', '/profile', {
    clientId,
    accountId,
    email: 'contract-sub@example.com',
    // Lets the sub key manage groups, which it could not do otherwise.
    groups: ['admin:subject'],
  });
  const sub = (
    await expectOk<IssuedKey>(url, root, 'POST', '/api-keys', {
      clientId,
      accountId,
      name: 'contract sub',
    })
  ).apiKey;

  for (const [kind, key] of [
    ['root', root],
    ['team', team],
  ] as const) {
    await expectOk(url, key, 'POST', '/project', { name: `Contract ${kind}`, tags: ['contract'] });
    await expectOk(url, key, 'POST', `/data/${collection}/index`, { field: indexedField });
    await expectOk(url, key, 'POST', `/data/${collection}`, {
      item: { _id: itemIds[kind], text: 'hello', [indexedField]: 1 },
    });
  }
  // The sub key's item is stamped with its accountId as owner, in its root's namespace.
  await expectOk(url, sub, 'POST', `/data/${collection}`, {
    item: { _id: itemIds.sub, text: 'mine', [indexedField]: 2 },
  });
  // A file of each: ids only the server makes, passed to the fuzzer like the team id.
  const fileIds = [
    await uploadFile(url, root, 'root.txt'),
    await uploadFile(url, team, 'team.txt'),
    await uploadFile(url, sub, 'sub.txt'),
  ];
  return { principals: { operator: operatorKey, root, team, sub }, teamId, fileIds };
}
