import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { guardedLookup } from './webhook-url';
import { signedHeaders } from './webhook-signature';
import type { Delivery, DeliveryAttempt, Webhook } from './webhook.schema';

/** Kept of an endpoint's answer, for GET /webhooks/{id}/deliveries. */
const ERROR_CHARS = 300;

/**
 * One attempt: the event POSTed with its Standard Webhooks headers, through the lookup that
 * refuses private addresses; redirects are not followed. Never throws: a failure is an attempt
 * without a status.
 */
export function postDelivery(
  webhook: Webhook,
  delivery: Delivery,
  settings: { timeoutMs: number; allowPrivate: boolean },
): Promise<DeliveryAttempt> {
  const started = Date.now();
  const url = new URL(webhook.url);
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'profile-data-service-webhooks',
    ...signedHeaders(webhook.secret, `msg_${delivery.id}`, delivery.payload),
  };
  return new Promise((resolve) => {
    const done = (outcome: { status?: number; error?: string }): void =>
      resolve({ at: new Date(started), durationMs: Date.now() - started, ...outcome });
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        headers,
        timeout: settings.timeoutMs,
        lookup: guardedLookup(settings.allowPrivate),
      },
      (res) => {
        // Redirects are not followed: a 3xx is a failed attempt (it could lead anywhere).
        res.resume();
        res.on('end', () => done({ status: res.statusCode ?? 0 }));
        res.on('error', (error) => done({ error: error.message.slice(0, ERROR_CHARS) }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${settings.timeoutMs} ms`)));
    req.on('error', (error) => done({ error: error.message.slice(0, ERROR_CHARS) }));
    req.end(delivery.payload);
  });
}
