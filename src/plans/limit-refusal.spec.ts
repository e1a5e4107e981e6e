import { DomainError } from '../common/errors';
import { COMMON_ERRORS } from '../common/errors';
import { limitRefusal } from './limit-refusal';
import { deploymentLimits, type LimitValues } from './plan-limits';
import type { AppConfig } from '../config';

const limits: LimitValues = deploymentLimits({
  limits: { maxCollections: 3, maxIndexes: 2, rateLimitMax: 10, importMaxBytes: 100 },
  files: { quotaBytes: 1000 },
  webhooks: { max: 4 },
  events: { maxStreamsPerKey: 2 },
} as AppConfig);
const at = { limit: 'webhooks', max: 4, usage: 4 } as const;
const deployment = (members: object) =>
  new DomainError(COMMON_ERRORS.CONFLICT, 'the deployment code', undefined, { ...members });

describe('limitRefusal', () => {
  it('is PLAN_LIMIT_EXCEEDED naming the limit, its value, the usage and the plan under a plan', () => {
    const since = new Date('2026-01-01T00:00:00Z');
    const error = limitRefusal(
      { plan: { name: 'starter', since, until: null }, limits },
      at,
      deployment,
    );
    expect(error.status).toBe(409);
    expect(error.members()).toMatchObject({
      code: 'PLAN_LIMIT_EXCEEDED',
      limit: 'webhooks',
      max: 4,
      usage: 4,
      plan: 'starter',
    });
  });

  it("is the deployment's own error, with the same members and plan null, without a plan", () => {
    const error = limitRefusal({ plan: null, limits }, at, deployment);
    expect(error.members()).toEqual({
      code: 'CONFLICT',
      detail: 'the deployment code',
      limit: 'webhooks',
      max: 4,
      usage: 4,
      plan: null,
    });
  });
});
