import type { RequestWithPrincipal } from './auth.decorators';
import { isPublishableRequest, rateLimitTrackerOf } from './rate-limit-tracker';

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

  it('counts a publishable key per key and client address', () => {
    const publishable = {
      kind: 'publishable',
      credential: { kind: 'key', keyId: 'p1', expiresAt: null },
      tenant: { kind: 'user', id: 's' },
      allowedOrigins: ['https://shop.example.com'],
      branch: '',
      boundBranch: null,
    } as const;
    const from = (ip: string): RequestWithPrincipal =>
      ({ principal: publishable, ip, headers: {} }) as unknown as RequestWithPrincipal;
    expect(rateLimitTrackerOf(from('203.0.113.7'))).toBe('key:p1|ip:203.0.113.7');
    expect(rateLimitTrackerOf(from('198.51.100.2'))).toBe('key:p1|ip:198.51.100.2');
    expect(isPublishableRequest(from('203.0.113.7'))).toBe(true);
    expect(isPublishableRequest(request({ kind: 'operator', branch: '' }))).toBe(false);
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
