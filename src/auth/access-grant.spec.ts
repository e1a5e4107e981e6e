import {
  allowsCollection,
  collectionAccess,
  escalationOf,
  FULL_GRANT,
  hasScope,
  type AccessGrant,
} from './access-grant';

const grant = (over: Partial<AccessGrant>): AccessGrant => ({ ...FULL_GRANT, ...over });

describe('access grants', () => {
  it('holds every scope without a list, a write scope implying its read scope', () => {
    expect(hasScope(FULL_GRANT, 'keys:manage')).toBe(true);
    const writer = grant({ scopes: ['data:write', 'export'] });
    expect(hasScope(writer, 'data:read')).toBe(true);
    expect(hasScope(writer, 'data:write')).toBe(true);
    expect(hasScope(writer, 'export')).toBe(true);
    expect(hasScope(writer, 'files:read')).toBe(false);
    expect(hasScope(grant({ scopes: ['data:read'] }), 'data:write')).toBe(false);
  });

  it('reaches collections by name and by trailing-* pattern, the most any entry gives', () => {
    const limited = grant({ collections: { orders: 'read', 'notes*': 'write', notes: 'read' } });
    expect(collectionAccess(limited, 'orders')).toBe('read');
    expect(collectionAccess(limited, 'notes')).toBe('write');
    expect(collectionAccess(limited, 'notes-2025')).toBe('write');
    expect(collectionAccess(limited, 'order')).toBeNull();
    expect(collectionAccess(limited, 'ordersX')).toBeNull();
    expect(allowsCollection(limited, 'orders', 'write')).toBe(false);
    expect(allowsCollection(limited, 'orders', 'read')).toBe(true);
    expect(collectionAccess(FULL_GRANT, 'anything')).toBe('write');
  });

  it('refuses a grant beyond the holder’s and allows one within it', () => {
    const held = grant({
      scopes: ['data:write'],
      collections: { 'notes*': 'write', orders: 'read' },
      allowedIps: ['10.0.0.0/8'],
    });
    const within = grant({
      scopes: ['data:read'],
      collections: { 'notes-2025*': 'write', orders: 'read' },
      allowedIps: ['10.0.0.0/8'],
    });
    expect(escalationOf(within, held)).toBeNull();
    expect(escalationOf(FULL_GRANT, FULL_GRANT)).toBeNull();
    expect(escalationOf(grant({ ...within, scopes: null }), held)).toBe('all scopes');
    expect(escalationOf(grant({ ...within, scopes: ['files:read'] }), held)).toContain(
      'files:read',
    );
    expect(escalationOf(grant({ ...within, collections: { orders: 'write' } }), held)).toContain(
      'write access',
    );
    expect(escalationOf(grant({ ...within, collections: { 'note*': 'read' } }), held)).toContain(
      'note*',
    );
    expect(escalationOf(grant({ ...within, collections: null }), held)).toBe('every collection');
    expect(escalationOf(grant({ ...within, allowedIps: null }), held)).toBe(
      'requests from any address',
    );
    expect(escalationOf(grant({ ...within, allowedIps: ['0.0.0.0/0'] }), held)).toContain(
      '0.0.0.0/0',
    );
  });
});
