import { Injectable } from '@nestjs/common';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../common/errors';
import { FILES_ERRORS } from './files.errors';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import type { Namespace, TenantKind } from '../common/tenancy/namespace';
import { DataClusters } from '../placement';

/**
 * What a link grants: one stored file of one namespace, until `expiresAt` (Unix seconds). `file`
 * is the id the API shows, which a file imported later may take again; `stored` is the key of
 * the stored copy (the record's `_id`: made new by every upload and import, kept by a move, never
 * used again), so the link reaches that copy and no other.
 */
export interface LinkGrant {
  namespace: Namespace;
  file: string;
  stored: string;
  expiresAt: number;
}

/** The payload's version: 2 names the stored copy. Links of version 1 named only the id. */
const LINK_VERSION = 2;
const STORED_KEY = /^[0-9a-f]{24}$/;

export class FileLinkInvalidError extends DomainError {
  constructor(detail = 'The link is damaged or was not signed by this service.') {
    super(FILES_ERRORS.FILE_LINK_INVALID, detail);
  }
}

export class FileLinkExpiredError extends DomainError {
  constructor(expiresAt: number) {
    super(
      FILES_ERRORS.FILE_LINK_EXPIRED,
      `The link expired at ${new Date(expiresAt * 1000).toISOString()}.`,
    );
  }
}

/** How long an instance keeps the key it read (ms). */
const KEY_CACHE_MS = 60_000;

/** The stored key of the signatures: one per deployment, made by the first instance that needs it. */
const SECRET_ID = 'file-links';

/**
 * Signed download links: a token `<payload>.<signature>`, both base64url, the payload naming the
 * namespace, the file, its stored copy and the expiry, the signature an HMAC-SHA256 of it. The
 * key is made once and kept in the main database (`service_secrets`), so every instance signs and
 * checks alike with nothing to configure; removing that document revokes every link within a
 * minute. A link of a deleted file finds no file (404), whatever is stored under its id later.
 * Links of version 1 (no stored copy named) are refused: which copy they were made for cannot
 * be told.
 */
@Injectable()
export class FileLinks {
  private key: Promise<Buffer> | null = null;
  private keyReadAt = 0;

  constructor(private readonly clusters: DataClusters) {}

  async sign(grant: LinkGrant): Promise<string> {
    const { kind, id, branch } = grant.namespace;
    const payload = Buffer.from(
      JSON.stringify({
        v: LINK_VERSION,
        k: kind,
        t: id,
        b: branch,
        f: grant.file,
        s: grant.stored,
        e: grant.expiresAt,
      }),
    ).toString('base64url');
    return `${payload}.${await this.signature(payload)}`;
  }

  /**
   * The grant of a token: FILE_LINK_INVALID when it is not ours or of an earlier version,
   * FILE_LINK_EXPIRED when over.
   */
  async verify(token: string, now = Date.now()): Promise<LinkGrant> {
    const [payload, signature, ...rest] = token.split('.');
    if (!payload || !signature || rest.length > 0) throw new FileLinkInvalidError();
    const expected = Buffer.from(await this.signature(payload), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new FileLinkInvalidError();
    const grant = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      v: number;
      k: TenantKind;
      t: string;
      b: string;
      f: string;
      s?: unknown;
      e: number;
    };
    if (grant.v !== LINK_VERSION || typeof grant.s !== 'string' || !STORED_KEY.test(grant.s))
      throw new FileLinkInvalidError(
        'The link names no stored file: it was made before links did. Make a new one.',
      );
    if (grant.e * 1000 <= now) throw new FileLinkExpiredError(grant.e);
    return {
      namespace: { kind: grant.k, id: grant.t, branch: grant.b },
      file: grant.f,
      stored: grant.s,
      expiresAt: grant.e,
    };
  }

  private async signature(payload: string): Promise<string> {
    return createHmac('sha256', await this.secret())
      .update(payload)
      .digest('base64url');
  }

  /** The key, read again every KEY_CACHE_MS: a key removed or replaced is used by no instance after that. */
  private secret(): Promise<Buffer> {
    const now = Date.now();
    if (this.key === null || now - this.keyReadAt > KEY_CACHE_MS) {
      this.keyReadAt = now;
      this.key = this.loadSecret().catch((error: unknown) => {
        this.key = null;
        throw error;
      });
    }
    return this.key;
  }

  private async loadSecret(): Promise<Buffer> {
    const secrets = this.clusters
      .mainDatabase()
      .collection<{ _id: string; key: string }>('service_secrets');
    const made = randomBytes(32).toString('base64');
    const inserted = await orDuplicate(() => secrets.insertOne({ _id: SECRET_ID, key: made }));
    if (inserted !== DUPLICATE) return Buffer.from(made, 'base64');
    const stored = await secrets.findOne({ _id: SECRET_ID });
    if (!stored) throw new Error('the file link key vanished while it was read');
    return Buffer.from(stored.key, 'base64');
  }
}
