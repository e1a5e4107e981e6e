import { createHash } from 'node:crypto';
import { digestApiKey, digestsEqual, generateApiKey } from './api-key.secret';

describe('API key secrets', () => {
  it('generates 256-bit keys with a display prefix and stores only the SHA-256 digest', () => {
    const key = generateApiKey();
    expect(key.secret).toMatch(/^pds_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.secret.slice(4), 'base64url')).toHaveLength(32);
    expect(key.digest).toBe(createHash('sha256').update(key.secret).digest('hex'));
    expect(key.secret.startsWith(key.prefix)).toBe(true);
    expect(key.prefix.length).toBeLessThan(16);
  });

  it('never generates the same key twice', () => {
    const secrets = new Set(Array.from({ length: 1000 }, () => generateApiKey().secret));
    expect(secrets.size).toBe(1000);
  });

  it('compares digests exactly', () => {
    const { secret, digest } = generateApiKey();
    expect(digestsEqual(digest, digestApiKey(secret))).toBe(true);
    expect(digestsEqual(digest, digestApiKey(`${secret}x`))).toBe(false);
    expect(digestsEqual(digest, digestApiKey(secret.toUpperCase()))).toBe(false);
    expect(digestsEqual(digest, 'abcd')).toBe(false);
    expect(digestApiKey('a')).not.toBe(digestApiKey('b'));
  });
});
