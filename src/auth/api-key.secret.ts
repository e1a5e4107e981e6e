import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY_PREFIX = 'pds_';
/** Characters of the key shown in listings; short enough to reveal nothing useful. */
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;

export interface GeneratedKey {
  secret: string;
  digest: string;
  prefix: string;
}

/** 32 random bytes (256 bits), base64url: the secret is shown once and never stored. */
export function generateApiKey(): GeneratedKey {
  const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { secret, digest: digestApiKey(secret), prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export function digestApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two SHA-256 hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
