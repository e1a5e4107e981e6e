import { createHash } from 'node:crypto';

/**
 * The stored id of the identity (issuer, subject): SHA-256 hex of both, so two issuers that issue
 * the same subject are two identities.
 */
export function identityIdOf(issuer: string, subject: string): string {
  return createHash('sha256').update(`${issuer}\n${subject}`).digest('hex');
}
