import type { CustomerPrincipal } from '../../auth';
import { accessPlanOf } from '../access/access-plan';
import { readAccessRules } from '../access/access-rules';
import { AccessRuleError } from '../data.errors';
import {
  bothScopes,
  refuseProtectedItem,
  ruleSeesWrite,
  sameAsRead,
  visibleWarnings,
} from './item-access';

const sub: CustomerPrincipal = {
  kind: 'sub',
  credential: { kind: 'key', keyId: 'k1', expiresAt: null },
  subject: 'u1',
  clientId: 'app',
  accountId: 'acct-1',
  profileId: 'p1',
  branch: 'main',
  boundBranch: null,
};

function planOf(body: unknown) {
  const { document } = readAccessRules(body, {
    maxConditions: 20,
    maxInValues: 100,
    maxProtectedFields: 64,
  });
  const entry = { rules: { access: { text: JSON.stringify(document), changedAt: new Date() } } };
  return accessPlanOf(sub, entry, 'userId');
}

describe('item writes under an access plan', () => {
  it('judges an update in one conditional write only when its values cannot move the item out of the rule', () => {
    const plan = planOf({
      sub: { read: 'all', update: { filter: { status: 'draft', 'meta.kind': 'a' } } },
    });
    expect(ruleSeesWrite(plan.update, ['n', 'title'])).toBe(false);
    expect(ruleSeesWrite(plan.update, ['status'])).toBe(true);
    // A path inside a field the rule names, or an object holding one.
    expect(ruleSeesWrite(plan.update, ['meta'])).toBe(true);
    expect(ruleSeesWrite(plan.update, ['status.x'])).toBe(true);
    // Every update writes _updatedAt.
    const byTime = planOf({
      sub: { update: { filter: { _updatedAt: { gt: '2026-01-01T00:00:00Z' } } } },
    });
    expect(ruleSeesWrite(byTime.update, ['n'])).toBe(true);
    // `all` and `none` are not changed by any value.
    expect(ruleSeesWrite(planOf({ sub: { update: 'all' } }).update, ['status'])).toBe(false);
    expect(ruleSeesWrite(planOf({ sub: { update: 'none' } }).update, ['status'])).toBe(false);
  });

  it('tells a rule that selects what the read rule does from one that narrows it', () => {
    const own = planOf({});
    expect(sameAsRead(own.read, own.update)).toBe(true);
    const shared = planOf({ sub: { read: 'all', update: 'own' } });
    expect(sameAsRead(shared.read, shared.update)).toBe(false);
    const closed = planOf({ sub: { read: 'own', delete: 'none' } });
    expect(sameAsRead(closed.read, closed.delete)).toBe(false);
    expect(bothScopes(own.read, own.update)).toEqual({ filter: { userId: 'acct-1' } });
    expect(bothScopes(shared.read, shared.update)).toEqual({ filter: { userId: 'acct-1' } });
    expect(bothScopes(null, null)).toBeNull();
  });

  it('refuses a new item holding a protected field anywhere on its path, not one beside it', () => {
    const plan = planOf({ protectedFields: { sub: ['cost', 'meta.note'] } });
    for (const item of [{ cost: null }, { meta: { note: 1 } }, { meta: { note: { deep: 1 } } }])
      expect(() => refuseProtectedItem(plan, item)).toThrow(AccessRuleError);
    for (const item of [{ costs: 1 }, { meta: { tag: 1 } }, { list: [{ cost: 1 }] }, { meta: 1 }])
      expect(() => refuseProtectedItem(plan, item)).not.toThrow();
  });

  it('leaves out the schema warnings about protected paths, and keeps the others', () => {
    const plan = planOf({ protectedFields: { sub: ['cost', 'lines.price'] } });
    const warnings = [
      { pointer: '/cost', keyword: 'minimum', message: '', field: 'item.cost' },
      { pointer: '/lines/0/price', keyword: 'type', message: '', field: 'item.lines.0.price' },
      { pointer: '/lines/0/qty', keyword: 'type', message: '', field: 'item.lines.0.qty' },
      { pointer: '', keyword: 'required', message: '', field: 'item' },
    ];
    expect(visibleWarnings(plan, warnings).map((w) => w.pointer)).toEqual(['/lines/0/qty', '']);
  });
});
