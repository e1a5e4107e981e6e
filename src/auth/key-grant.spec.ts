import { ValidationFailedError } from '../common/errors';
import { grantOfRequest, isAddressRange } from './key-grant';
import { UnknownScopeError } from './auth.errors';

const BOUNDS = { maxCollections: 3, maxAllowedIps: 2 };

function fieldsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationFailedError) return (error.errors ?? []).map((e) => e.field);
    throw error;
  }
  throw new Error('expected a validation failure');
}

describe('grantOfRequest', () => {
  it('gives no limit for absent and null members', () => {
    expect(grantOfRequest({}, BOUNDS)).toEqual({
      scopes: null,
      collections: null,
      allowedIps: null,
    });
    expect(grantOfRequest({ scopes: null, collections: null, allowedIps: null }, BOUNDS)).toEqual({
      scopes: null,
      collections: null,
      allowedIps: null,
    });
  });

  it('keeps an empty scope list as a key with no scope', () => {
    expect(grantOfRequest({ scopes: [] }, BOUNDS).scopes).toEqual([]);
  });

  it('refuses unknown scopes by name', () => {
    expect(() => grantOfRequest({ scopes: ['data:read', 'data:delete'] }, BOUNDS)).toThrow(
      UnknownScopeError,
    );
    expect(() => grantOfRequest({ scopes: ['data:delete'] }, BOUNDS)).toThrow(/data:delete/);
  });

  it('takes names and patterns with one trailing *, with read or write', () => {
    expect(
      grantOfRequest({ collections: { orders: 'read', 'notes*': 'write', '*': 'read' } }, BOUNDS)
        .collections,
    ).toEqual({ orders: 'read', 'notes*': 'write', '*': 'read' });
    expect(
      fieldsOf(() =>
        grantOfRequest(
          { collections: { 'a*b': 'read', 'n**': 'read', '1x': 'write', ok: 'delete' } },
          { ...BOUNDS, maxCollections: 4 },
        ),
      ),
    ).toEqual(['collections.a*b', 'collections.n**', 'collections.1x', 'collections.ok']);
    expect(fieldsOf(() => grantOfRequest({ collections: {} }, BOUNDS))).toEqual(['collections']);
  });

  it('takes 1 to the bound of IPv4/IPv6 addresses and CIDRs', () => {
    expect(
      grantOfRequest({ allowedIps: ['10.0.0.0/8', '2001:db8::/32'] }, BOUNDS).allowedIps,
    ).toEqual(['10.0.0.0/8', '2001:db8::/32']);
    expect(fieldsOf(() => grantOfRequest({ allowedIps: [] }, BOUNDS))).toEqual(['allowedIps']);
    expect(
      fieldsOf(() => grantOfRequest({ allowedIps: ['1.2.3.4', '::1', '10.0.0.1'] }, BOUNDS)),
    ).toEqual(['allowedIps']);
    // Beyond the bound only the count is reported, not every entry.
    expect(fieldsOf(() => grantOfRequest({ allowedIps: ['x', 'y', 'z'] }, BOUNDS))).toEqual([
      'allowedIps',
    ]);
    expect(
      fieldsOf(() =>
        grantOfRequest({ collections: { '1': 'x', '2': 'x', '3': 'x', '4': 'x' } }, BOUNDS),
      ),
    ).toEqual(['collections']);
    expect(fieldsOf(() => grantOfRequest({ allowedIps: ['10.0.0.0/33'] }, BOUNDS))).toEqual([
      'allowedIps[0]',
    ]);
  });
});

describe('isAddressRange', () => {
  it.each([
    ['203.0.113.7', true],
    ['203.0.113.0/24', true],
    ['0.0.0.0/0', true],
    ['::1', true],
    ['2001:db8::/128', true],
    ['2001:db8::/129', false],
    ['10.0.0.0/33', false],
    ['10.0.0.0/', false],
    ['10.0.0.0/08', false],
    ['10.0.0', false],
    ['example.com', false],
    ['', false],
  ])('%s → %s', (value, valid) => {
    expect(isAddressRange(value)).toBe(valid);
  });
});
