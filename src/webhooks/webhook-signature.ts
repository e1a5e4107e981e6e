import { createHmac, randomBytes } from 'node:crypto';

/** A new secret in the Standard Webhooks form: `whsec_` and base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A client's secret: `whsec_` and base64 of 24 to 64 bytes. */
export function isWebhookSecret(secret: string): boolean {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  if (!match?.[1]) return false;
  const bytes = Buffer.from(match[1], 'base64');
  return bytes.length >= 24 && bytes.length <= 64 && bytes.toString('base64') === match[1];
}

/**
 * The headers of a Standard Webhooks delivery: `webhook-id`, `webhook-timestamp` (seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` with the secret's
 * bytes as key — what the published verifier libraries check.
 */
export function signedHeaders(
  secret: string,
  id: string,
  body: string,
  now = new Date(),
): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
