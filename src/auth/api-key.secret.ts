import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

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

/**
 * The SHA-256 of a key, hex: what is stored and looked up. Every request hashes its key once;
 * the one-shot `crypto.hash` (Node.js 20.12 and later) takes a third of a Hash object's time.
 */
export function digestApiKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time comparison of two SHA-256 hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
