import { tenantDatabaseName } from './tenant-location';

describe('tenantDatabaseName', () => {
  it('names a database within MongoDB’s and FerretDB’s limits, whatever the id', () => {
    for (const id of ['x', 'auth0|5f7c8ec7c33c6c004bbafe82', 'a.b/c\\d "e"$', 'é'.repeat(128)]) {
      expect(tenantDatabaseName('profile_data', { kind: 'user', id })).toMatch(
        /^tenant_[0-9a-f]{32}$/,
      );
    }
  });

  it('differs between tenant kinds, ids and deployments sharing a cluster', () => {
    const names = new Set([
      tenantDatabaseName('app', { kind: 'user', id: 'x' }),
      tenantDatabaseName('app', { kind: 'team', id: 'x' }),
      tenantDatabaseName('app', { kind: 'user', id: 'y' }),
      tenantDatabaseName('staging', { kind: 'user', id: 'x' }),
      // No concatenation can make two tenants meet.
      tenantDatabaseName('app', { kind: 'user', id: 'x\u0000' }),
    ]);
    expect(names.size).toBe(5);
    expect(tenantDatabaseName('app', { kind: 'user', id: 'x' })).toBe(
      tenantDatabaseName('app', { kind: 'user', id: 'x' }),
    );
  });
});
