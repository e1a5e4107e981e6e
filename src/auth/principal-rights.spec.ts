import type { AppConfig } from '../config';
import type { BackgroundTasks } from '../common/scheduling/background-tasks';
import type { ApiKeyRecord, ApiKeyRepository } from './api-key.repository';
import type { CustomerPrincipal } from './principal';
import { PrincipalRights, type RightsLoss } from './principal-rights';
import type { TokenPrincipals } from './token-principals.port';
import type { TeamMembershipLookup } from './team-memberships.port';

const KEY_A = 'a'.repeat(24);
const KEY_B = 'b'.repeat(24);

function record(id: string, expiresAt: Date | null = null): ApiKeyRecord {
  return { id, expiresAt } as ApiKeyRecord;
}

function rightsOver(keys: Map<string, ApiKeyRecord>, members: Set<string>) {
  const lookups: string[][] = [];
  const memberLookups: number[] = [];
  const repository = {
    findManyById: (ids: string[]) => {
      lookups.push(ids);
      return Promise.resolve(ids.flatMap((id) => keys.get(id) ?? []));
    },
  } as unknown as ApiKeyRepository;
  const teams: TeamMembershipLookup = {
    roleOf: () => Promise.resolve(null),
    existingAmong: (pairs) => {
      memberLookups.push(pairs.length);
      return Promise.resolve(pairs.filter((p) => members.has(`${p.teamId}/${p.subject}`)));
    },
  };
  const tasks = { register: () => ({ runNow: () => Promise.resolve(), isStopped: false }) };
  const tokens: TokenPrincipals = {
    principalOf: () => Promise.reject(new Error('no tokens here')),
    existingAmong: () => Promise.resolve([]),
  };
  const rights = new PrincipalRights(
    repository,
    teams,
    tokens,
    { rightsCheckMs: 1000 } as AppConfig,
    tasks as unknown as BackgroundTasks,
  );
  return { rights, lookups, memberLookups };
}

const root = (keyId: string): CustomerPrincipal => ({
  kind: 'root',
  credential: { kind: 'key', keyId, expiresAt: null },
  subject: 'u1',
  branch: '',
  boundBranch: null,
});
const acting = (keyId: string, teamId: string): CustomerPrincipal => ({
  kind: 'team',
  credential: { kind: 'key', keyId, expiresAt: null },
  teamId,
  branch: '',
  boundBranch: null,
  actingSubject: 'u1',
});

describe('PrincipalRights', () => {
  it('checks the rights of 100 readers confirming at once with one key lookup and one membership lookup', async () => {
    const keys = new Map([[KEY_A, record(KEY_A)]]);
    const { rights, lookups, memberLookups } = rightsOver(keys, new Set(['t1/u1']));
    const watches = Array.from({ length: 100 }, (_, i) =>
      rights.watch(i % 2 === 0 ? root(KEY_A) : acting(KEY_A, 't1'), () => undefined),
    );
    const verdicts = await Promise.all(watches.map((watch) => watch.confirm()));
    expect(verdicts).toEqual(Array(100).fill(null));
    expect(lookups).toEqual([[KEY_A]]);
    expect(memberLookups).toEqual([1]);
  });

  it('names the loss — a revoked key, an expired key, an ended membership — and tells it once', async () => {
    const keys = new Map([
      [KEY_A, record(KEY_A)],
      [KEY_B, record(KEY_B, new Date(Date.now() - 1))],
    ]);
    const { rights } = rightsOver(keys, new Set());
    const told: RightsLoss['reason'][] = [];
    const tell = (loss: RightsLoss) => told.push(loss.reason);
    const revoked = rights.watch(root('c'.repeat(24)), tell);
    const expired = rights.watch(root(KEY_B), tell);
    const removed = rights.watch(acting(KEY_A, 't1'), tell);
    const holding = rights.watch(root(KEY_A), tell);
    expect((await revoked.confirm())?.reason).toBe('KEY_REVOKED');
    expect((await expired.confirm())?.reason).toBe('KEY_EXPIRED');
    expect((await removed.confirm())?.reason).toBe('TEAM_MEMBERSHIP_ENDED');
    expect(await holding.confirm()).toBeNull();
    await holding.confirm();
    expect(told.sort()).toEqual(['KEY_EXPIRED', 'KEY_REVOKED', 'TEAM_MEMBERSHIP_ENDED']);
  });

  it('confirms only with a check that started after the call: a revocation during a check is seen', async () => {
    const keys = new Map([[KEY_A, record(KEY_A)]]);
    const { rights, lookups } = rightsOver(keys, new Set());
    const watch = rights.watch(root(KEY_A), () => undefined);
    const first = watch.confirm();
    while (lookups.length === 0) await new Promise((resolve) => setImmediate(resolve));
    // Revoked after the first check began: a confirm asked now must not be answered by it.
    keys.delete(KEY_A);
    const second = watch.confirm();
    expect(await first).toBeNull();
    expect((await second)?.reason).toBe('KEY_REVOKED');
    expect(lookups).toHaveLength(2);
  });
});
