import type { RequestWithPrincipal } from './auth.decorators';
import { rateLimitTrackerOf } from './rate-limit-tracker';

function request(principal: RequestWithPrincipal['principal'], key?: string): RequestWithPrincipal {
  return {
    principal,
    ip: '203.0.113.7',
    headers: key === undefined ? {} : { 'x-api-key': key },
  } as unknown as RequestWithPrincipal;
}

describe('rateLimitTrackerOf', () => {
  it('counts an authenticated key by its id, whatever branch or team it acts in', () => {
    const root = {
      kind: 'root',
      credential: { kind: 'key', keyId: 'k1', expiresAt: null },
      subject: 's',
      branch: '',
      boundBranch: null,
    } as const;
    expect(rateLimitTrackerOf(request(root, 'secret'))).toBe('key:k1');
    expect(
      rateLimitTrackerOf(
        request({
          kind: 'team',
          credential: { kind: 'key', keyId: 'k1', expiresAt: null },
          teamId: 't',
          branch: 'b',
          boundBranch: null,
        }),
      ),
    ).toBe('key:k1');
  });

  it('gives the operator key one budget', () => {
    expect(rateLimitTrackerOf(request({ kind: 'operator', branch: '' }))).toBe('operator');
  });

  it('counts a public route by address: a key sent there opens no budget of its own', () => {
    expect(rateLimitTrackerOf(request(undefined, 'made-up-1'))).toBe('ip:203.0.113.7');
    expect(rateLimitTrackerOf(request(undefined, 'made-up-2'))).toBe('ip:203.0.113.7');
    expect(rateLimitTrackerOf(request(undefined))).toBe('ip:203.0.113.7');
  });
});
