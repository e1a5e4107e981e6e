import sift from 'sift';
import { allowsCollection, FULL_GRANT, type AccessGrant } from './access-grant';
import {
  collectionNameFilter,
  collectionPatternsOf,
  readableCollections,
} from './collection-reach';
import type { CustomerPrincipal } from './principal';

const keyWith = (collections: AccessGrant['collections']): CustomerPrincipal => ({
  kind: 'root',
  credential: { kind: 'key', keyId: 'k', expiresAt: null },
  subject: 's',
  branch: '',
  boundBranch: null,
  grant: { ...FULL_GRANT, collections },
});

describe('collection reach', () => {
  const limits = { orders: 'read', 'notes*': 'write', 'a.b*': 'read' } as const;
  const names = [
    'orders',
    'orders2',
    'notes',
    'notes-x',
    'note',
    'secret',
    'a.bc',
    'aXbc',
    'Orders',
  ];

  it('gives a database filter that holds exactly the names the grant reaches', () => {
    const principal = keyWith(limits);
    const patterns = collectionPatternsOf(principal);
    expect(patterns).toEqual({ names: ['orders'], stems: ['notes', 'a.b'] });
    const matches = sift(collectionNameFilter('name', patterns!));
    const grant = { ...FULL_GRANT, collections: limits };
    for (const name of names)
      expect([name, matches({ name })]).toEqual([name, allowsCollection(grant, name, 'read')]);
  });

  it('has no patterns and keeps every entry for a key without collections', () => {
    const principal = keyWith(null);
    expect(collectionPatternsOf(principal)).toBeNull();
    const entries = names.map((name) => ({ name }));
    expect(readableCollections(principal, entries)).toEqual(entries);
    expect(readableCollections(keyWith(limits), entries).map((e) => e.name)).toEqual([
      'orders',
      'notes',
      'notes-x',
      'a.bc',
    ]);
  });

  it('reaches nothing with an empty limit', () => {
    const principal = keyWith({});
    const matches = sift(collectionNameFilter('name', collectionPatternsOf(principal)!));
    expect(names.filter((name) => matches({ name }))).toEqual([]);
  });
});
