import { DomainError } from '../common/errors';
import { branchOfNewKey, scopeOf } from './key-scope';

const unbound = { subject: 'u1', boundBranch: null };
const dev = { subject: 'u1', boundBranch: 'dev' };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return undefined;
}

describe('key management scope', () => {
  it('gives an unbound key every key of the user and a bound key only its branch', () => {
    expect(scopeOf(unbound)).toEqual({ subject: 'u1' });
    expect(scopeOf(dev)).toEqual({ subject: 'u1', branch: 'dev' });
    expect(scopeOf({ subject: 'u1', boundBranch: '' })).toEqual({ subject: 'u1', branch: '' });
  });

  it('binds new keys of an unbound key as asked, else to the fallback', () => {
    expect(branchOfNewKey(unbound, undefined, null)).toBeNull();
    expect(branchOfNewKey(unbound, 'prod', null)).toBe('prod');
    expect(branchOfNewKey(unbound, undefined, 'staging')).toBe('staging');
  });

  it('binds every key a bound key mints to its own branch', () => {
    expect(branchOfNewKey(dev, undefined, null)).toBe('dev');
    expect(branchOfNewKey(dev, 'dev', null)).toBe('dev');
    expect(branchOfNewKey(dev, undefined, 'dev')).toBe('dev');
  });

  it('refuses another branch from a bound key with BRANCH_MISMATCH', () => {
    expect(codeOf(() => branchOfNewKey(dev, 'prod', null))).toBe('BRANCH_MISMATCH');
    expect(codeOf(() => branchOfNewKey({ subject: 'u1', boundBranch: '' }, 'dev', ''))).toBe(
      'BRANCH_MISMATCH',
    );
  });
});
