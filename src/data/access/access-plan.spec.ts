import type { CustomerPrincipal } from '../../auth';
import { accessPlanOf } from './access-plan';
import { DEFAULT_ACCESS_RULES, readAccessRules } from './access-rules';
import { withoutProtected } from './protected-fields';

const key = { kind: 'key' as const, keyId: 'k1', expiresAt: null };
const root: CustomerPrincipal = {
  kind: 'root',
  credential: key,
  subject: 'u1',
  branch: 'main',
  boundBranch: null,
};
const sub: CustomerPrincipal = {
  kind: 'sub',
  credential: key,
  subject: 'u1',
  clientId: 'app',
  accountId: 'acct-1',
  profileId: 'p1',
  branch: 'main',
  boundBranch: null,
};
const limits = { maxConditions: 20, maxInValues: 100, maxProtectedFields: 64 };

function entryOf(body: unknown) {
  const { document } = readAccessRules(body, limits);
  return { rules: { access: { text: JSON.stringify(document), changedAt: new Date() } } };
}

describe('accessPlanOf', () => {
  it('gives root and team keys every item and no protected fields, whatever the rules', () => {
    const plan = accessPlanOf(root, entryOf({ sub: { read: 'none' } }), 'userId');
    expect(plan.caller).toBe('full');
    expect(plan.read.filter).toBeNull();
    expect(plan.protectedFields).toEqual([]);
  });

  it('gives a sub key its own items without rules, and the same with the defaults written out', () => {
    const implicit = accessPlanOf(sub, { rules: {} }, 'ownerId');
    const explicit = accessPlanOf(sub, entryOf(DEFAULT_ACCESS_RULES), 'ownerId');
    for (const plan of [implicit, explicit]) {
      expect(plan.read.filter).toEqual({ ownerId: 'acct-1' });
      expect(plan.update.filter).toEqual({ ownerId: 'acct-1' });
      expect(plan.read.matches({ ownerId: 'acct-1' })).toBe(true);
      expect(plan.read.matches({ ownerId: 'acct-2' })).toBe(false);
    }
  });

  it("binds the caller's constants into a filter rule and judges items in memory alike", () => {
    const plan = accessPlanOf(
      sub,
      entryOf({ sub: { read: { filter: { shared: true, app: '$caller.clientId' } } } }),
      'userId',
    );
    expect(plan.read.filter).toEqual({ $and: [{ shared: true }, { app: 'app' }] });
    expect(plan.read.matches({ shared: true, app: 'app' })).toBe(true);
    expect(plan.read.matches({ shared: true, app: 'other' })).toBe(false);
    expect(plan.create.filter).toEqual({ userId: 'acct-1' });
  });

  it('makes `none` match nothing, in the database filter and in memory', () => {
    const plan = accessPlanOf(sub, entryOf({ sub: { delete: 'none' } }), 'userId');
    expect(plan.delete.none).toBe(true);
    expect(plan.delete.filter).toEqual({ _id: { $in: [] } });
    expect(plan.delete.matches({ userId: 'acct-1' })).toBe(false);
  });

  it('refuses what is not a rule, naming each member', () => {
    expect(() =>
      readAccessRules(
        {
          sub: { read: 'some', write: 'all' },
          public: { read: 'own' },
          protectedFields: { sub: ['_id', 'a'] },
          extra: 1,
        },
        limits,
      ),
    ).toThrow(
      expect.objectContaining({
        errors: expect.arrayContaining([
          expect.objectContaining({ field: 'sub.read' }),
          expect.objectContaining({ field: 'sub.write' }),
          expect.objectContaining({ field: 'public.read' }),
          expect.objectContaining({ field: 'protectedFields.sub[0]' }),
          expect.objectContaining({ field: 'body.extra' }),
        ]) as unknown,
      }),
    );
    expect(() =>
      readAccessRules({ sub: { read: { filter: { a: '$caller.email' } } } }, limits),
    ).toThrow(/sub\.read\.filter\.a/);
  });

  it('removes protected fields through nested objects and arrays of objects', () => {
    const plan = accessPlanOf(
      sub,
      entryOf({ sub: { read: 'all' }, protectedFields: { sub: ['cost', 'lines.secret'] } }),
      'userId',
    );
    expect(withoutProtected(plan, { a: 1, cost: 5, lines: [{ secret: 1, n: 2 }, 3] })).toEqual({
      a: 1,
      lines: [{ n: 2 }, 3],
    });
  });
});
