import type { Request } from 'express';
import type { Principal } from './auth';
import type { AppConfig } from './config';
import type { ActiveLimits, TenantLimits } from './plans';
import { TenantRequestAllowance } from './tenant-request-allowance';

const credential = { kind: 'key', keyId: 'k', expiresAt: null } as const;
const root: Principal = { kind: 'root', credential, subject: 'ada', branch: '', boundBranch: null };
const team: Principal = { kind: 'team', credential, teamId: 't1', branch: '', boundBranch: null };

/** Ada's plan allows 5 requests per window, team t1's none is set (no limit). */
const limits = {
  of: (tenant: { kind: string; id: string }) =>
    Promise.resolve({
      plan: null,
      limits: { requestsPerWindow: tenant.id === 'ada' ? 5 : null },
    } as unknown as ActiveLimits),
} as unknown as TenantLimits;
const allowance = new TenantRequestAllowance(limits, {
  limits: { rateLimitMax: 1000 },
} as AppConfig);
const requestOf = (principal?: Principal) => ({ principal }) as unknown as Request;

describe('TenantRequestAllowance', () => {
  it("is the requestsPerWindow of the key's tenant", async () => {
    expect(await allowance.of(requestOf(root))).toBe(5);
    expect(
      await allowance.of(
        requestOf({
          ...root,
          kind: 'sub',
          clientId: 'c',
          accountId: 'a',
          profileId: 'p',
        }),
      ),
    ).toBe(5);
  });

  it('is null (no limit) for a tenant whose limits set none', async () => {
    expect(await allowance.of(requestOf(team))).toBeNull();
  });

  it("is RATE_LIMIT_MAX for the operator's key and for requests without a key", async () => {
    const operator = {
      kind: 'operator',
      credential,
      branch: '',
      boundBranch: null,
    } as unknown as Principal;
    expect(await allowance.of(requestOf(operator))).toBe(1000);
    expect(await allowance.of(requestOf())).toBe(1000);
  });
});
