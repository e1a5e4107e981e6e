import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** A response as it is kept for replay. */
export interface StoredResponse {
  status: number;
  /** The headers that belong to the outcome (Content-Type, ETag, Location, Link, those routes name). */
  headers: Record<string, string>;
  body: Buffer;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM over `[meta length][meta JSON][body]`: the body is kept as its bytes (no escaping,
 * so its stored size stays its size) and nothing of the response is readable without the key.
 */
export function sealResponse(response: StoredResponse, key: Buffer): Buffer {
  const meta = Buffer.from(JSON.stringify({ status: response.status, headers: response.headers }));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(meta.length);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([
    cipher.update(length),
    cipher.update(meta),
    cipher.update(response.body),
    cipher.final(),
  ]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

/** The response sealResponse kept; throws when the key is not the one it was sealed with. */
export function openResponse(sealed: Buffer, key: Buffer): StoredResponse {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const plain = Buffer.concat([
    decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
    decipher.final(),
  ]);
  const metaLength = plain.readUInt32BE(0);
  const meta = JSON.parse(plain.subarray(4, 4 + metaLength).toString('utf8')) as Omit<
    StoredResponse,
    'body'
  >;
  return { ...meta, body: plain.subarray(4 + metaLength) };
}
