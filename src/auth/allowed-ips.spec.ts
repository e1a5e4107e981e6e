import { FULL_GRANT, type AccessGrant } from './access-grant';
import { addressAllowed } from './allowed-ips';

const limited = (allowedIps: string[]): AccessGrant => ({ ...FULL_GRANT, allowedIps });

describe('addressAllowed', () => {
  it('admits every address without allowedIps', () => {
    expect(addressAllowed(FULL_GRANT, '203.0.113.9')).toBe(true);
  });

  it('matches IPv4 CIDRs and single addresses', () => {
    const grant = limited(['10.1.0.0/16', '192.0.2.7']);
    expect(addressAllowed(grant, '10.1.200.3')).toBe(true);
    expect(addressAllowed(grant, '192.0.2.7')).toBe(true);
    expect(addressAllowed(grant, '10.2.0.1')).toBe(false);
    expect(addressAllowed(grant, '192.0.2.8')).toBe(false);
  });

  it('matches IPv6 CIDRs, and IPv4-mapped IPv6 addresses against IPv4 entries', () => {
    const grant = limited(['2001:db8::/32', '127.0.0.1']);
    expect(addressAllowed(grant, '2001:db8:1::5')).toBe(true);
    expect(addressAllowed(grant, '2001:db9::1')).toBe(false);
    expect(addressAllowed(grant, '::ffff:127.0.0.1')).toBe(true);
    expect(addressAllowed(grant, '::ffff:127.0.0.2')).toBe(false);
  });

  it('refuses an unknown or unparsable address, and an entry that does not parse admits nothing', () => {
    const grant = limited(['10.0.0.0/40', 'nonsense']);
    expect(addressAllowed(grant, undefined)).toBe(false);
    expect(addressAllowed(grant, 'unknown')).toBe(false);
    expect(addressAllowed(grant, '10.0.0.1')).toBe(false);
  });
});
