import { randomBytes } from 'node:crypto';
import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import {
  addTeamMember,
  createApiKey,
  createProject,
  createSubKey,
  createTeam,
  createUser,
  type TestProject,
  type TestSubProfile,
  type TestTeam,
  type TestUser,
} from '../support/factories';
import { as, asOperator } from '../support/http';
import { digestOf, exportAs, type Line, type NdjsonResponse } from '../support/ndjson';
import { until } from '../support/until';

/** Account exports: GET /me/export and GET /admin/users/{subject}/export. */
describe('account export', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, { LIFECYCLE_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true' });
  });

  afterAll(async () => {
    await t?.close();
  });

  interface Account {
    user: TestUser;
    sub: TestSubProfile;
    project: TestProject;
    team: TestTeam;
    teamName: string;
    membership: { role: string; createdAt: string };
    webhookSecret: string;
  }

  /**
   * A user with a sub profile, two keys (root and sub), a project, a team membership, a webhook
   * in the feature branch, and items in the standard branch and in the feature branch.
   */
  async function populated(): Promise<Account> {
    const user = await createUser(t);
    const sub = await createSubKey(t, user, { clientId: 'web', accountId: 'acct-1' });
    const project = await createProject(t, user, { name: 'Apollo', tags: ['web'] });
    const teamName = `team-${randomBytes(4).toString('hex')}`;
    const team = await createTeam(t, teamName);
    const membership = await addTeamMember(t, team, user);
    const api = as(t, user);
    await api.post('/data/notes', { item: { _id: 'n2', text: 'second' } }).expect(200);
    await api.post('/data/notes', { item: { _id: 'n1', text: 'first' } }).expect(200);
    await api
      .post('/data/orders', { item: { _id: 'o1', total: 3 } }, { branch: 'feature' })
      .expect(200);
    const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`;
    await api
      .post(
        '/webhooks',
        {
          url: 'http://127.0.0.1:9/hook',
          events: ['deleted'],
          collection: 'nothing',
          secret: webhookSecret,
        },
        { branch: 'feature' },
      )
      .expect(200);
    return { user, sub, project, team, teamName, membership, webhookSecret };
  }

  const myExport = (key: string, headers: Record<string, string> = {}) =>
    exportAs(t, key, {}, { path: '/me/export', headers });
  const userExport = (subject: string, headers: Record<string, string> = {}) =>
    exportAs(t, TEST_ADMIN_KEY, {}, { path: `/admin/users/${subject}/export`, headers });

  /** The member names of every object in a value, nested ones included. */
  function namesIn(value: unknown): string[] {
    if (Array.isArray(value)) return value.flatMap(namesIn);
    if (typeof value !== 'object' || value === null) return [];
    return Object.entries(value).flatMap(([name, inner]) => [name, ...namesIn(inner)]);
  }

  /** The manifest without what differs from one export to the next. */
  function stable(manifest: Line | undefined): Line {
    const branches = (manifest?.branches as Line[]).map((branch) => ({
      ...branch,
      feedPosition: 'any',
    }));
    return { ...manifest, exportedAt: 'any', branches };
  }

  it('exports the account: its records, the items of every branch, and an end that digests them', async () => {
    const account = await populated();
    const { user, sub } = account;
    const res = await myExport(user.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');

    const [manifest, ...rest] = res.lines;
    expect(manifest).toMatchObject({
      type: 'manifest',
      format: 1,
      account: { subject: user.subject },
      branches: [
        { branch: '', collections: [{ name: 'notes', indexes: [], count: 2 }] },
        { branch: 'feature', collections: [{ name: 'orders', indexes: [], count: 1 }] },
      ],
    });
    for (const branch of manifest?.branches as Line[])
      expect(typeof branch.feedPosition).toBe('string');

    const records = rest.slice(0, -1);
    expect(records.map((line) => line.type)).toEqual([
      'profile',
      'subProfile',
      'apiKey',
      'apiKey',
      'project',
      'membership',
      'webhook',
      'item',
      'item',
      'item',
    ]);
    const ofType = (type: string) => records.filter((line) => line.type === type);
    const root = await as(t, user).get('/profile').expect(200);
    expect(ofType('profile')).toEqual([{ type: 'profile', profile: root.body }]);
    expect(ofType('subProfile')).toEqual([
      {
        type: 'subProfile',
        profile: expect.objectContaining({
          id: sub.profileId,
          subject: user.subject,
          clientId: 'web',
          accountId: 'acct-1',
          branch: '',
        }) as unknown,
      },
    ]);
    const keys = await as(t, user).get('/api-keys').expect(200);
    expect(ofType('apiKey').map((line) => line.key)).toEqual(keys.body);
    expect((keys.body as Line[]).map((key) => key.kind).sort()).toEqual(['root', 'sub']);
    expect(ofType('project')).toEqual([{ type: 'project', project: account.project }]);
    expect(ofType('membership')).toEqual([
      {
        type: 'membership',
        membership: {
          teamId: account.team.teamId,
          name: account.teamName,
          role: 'member',
          createdAt: account.membership.createdAt,
        },
      },
    ]);
    const webhooks = await as(t, user).get('/webhooks', { branch: 'feature' }).expect(200);
    expect(ofType('webhook')).toEqual([
      { type: 'webhook', branch: 'feature', webhook: (webhooks.body as Line[])[0] },
    ]);
    expect(
      ofType('item').map((line) => [line.branch, line.collection, (line.item as Line)._id]),
    ).toEqual([
      ['', 'notes', 'n1'],
      ['', 'notes', 'n2'],
      ['feature', 'orders', 'o1'],
    ]);
    expect((ofType('item')[2]?.item as Line).total).toBe(3);

    // Secrets never: not the keys, not their hashes, not the webhook's signing secret.
    for (const secret of [user.apiKey, sub.apiKey, account.webhookSecret])
      expect(res.text).not.toContain(secret);
    expect(namesIn(res.lines).filter((name) => /hash|digest|secret/i.test(name))).toEqual([]);

    const texts = res.text.split('\n').slice(1, -2);
    expect(rest.at(-1)).toEqual({ type: 'end', items: 10, sha256: digestOf(texts) });
  });

  it("gives the operator the same records for the user's subject", async () => {
    const { user } = await populated();
    const own = await myExport(user.apiKey);
    const operator = await userExport(user.subject, { 'Accept-Encoding': 'gzip' });
    expect(operator.status).toBe(200);
    expect(operator.headers['content-encoding']).toBe('gzip');
    expect(operator.lines.slice(1)).toEqual(own.lines.slice(1));
    expect(stable(operator.lines[0])).toEqual(stable(own.lines[0]));
    expect(operator.lines).toHaveLength(12);
  });

  it('refuses every key but an unbound root key of the account', async () => {
    const { user, sub, team } = await populated();
    const bound = await createApiKey(t, user, { branch: 'feature' });
    const refusals: [string, NdjsonResponse][] = [
      ['sub key', await myExport(sub.apiKey)],
      ['team key', await myExport(team.apiKey)],
      ['member acting for its team', await myExport(user.apiKey, { 'X-Team': team.teamId })],
      ['operator key', await myExport(TEST_ADMIN_KEY)],
      ['root key bound to a branch', await myExport(bound.apiKey)],
    ];
    for (const [who, res] of refusals)
      expect({ who, status: res.status, code: res.body.code }).toEqual({
        who,
        status: 403,
        code: 'FORBIDDEN',
      });
    expect(refusals[4]?.[1].body.detail).toMatch(/bound to branch 'feature'.*unbound root key/);
  });

  it('answers 404 for an unknown subject', async () => {
    const res = await userExport(`nobody-${randomBytes(4).toString('hex')}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('PROFILE_NOT_FOUND');
  });

  it('answers 404 once the account is erased', async () => {
    const { user } = await populated();
    expect((await userExport(user.subject)).status).toBe(200);
    const erasure = await asOperator(t).delete(`/admin/users/${user.subject}`).expect(202);
    const id = (erasure.body as { id: string }).id;
    await until('the erasure is done', async () => {
      const res = await asOperator(t).get(`/admin/erasures/${id}`).expect(200);
      return (res.body as { status: string }).status === 'done';
    });
    const after = await userExport(user.subject);
    expect(after.status).toBe(404);
    expect(after.body.code).toBe('PROFILE_NOT_FOUND');
    expect((await myExport(user.apiKey)).status).toBe(401);
  });
});
