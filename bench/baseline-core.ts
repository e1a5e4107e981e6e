// What both baselines share (baseline.ts on node:http, baseline-nest.ts on NestJS): the database
// connection and its command count, the request count, the key lookup with its bounded cache,
// the collections the harness hands over and the item documents as the service stores them.
// Environment: MONGODB_URI, MONGODB_DB_NAME, BASELINE_COLLECTIONS (JSON: { <name>: ItemTemplate }
// from lib/seed.ts), BASELINE_KEY_CACHE_MS (the service's API_KEY_CACHE_MS default, 5 s, and its
// size, 10,000 keys; 0 looks the key up on every request, as the baseline did before its cache).
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import { MongoClient, ObjectId, type Collection } from 'mongodb';
import type { ItemTemplate } from './lib/seed';

const collections = JSON.parse(process.env.BASELINE_COLLECTIONS ?? '{}') as Record<
  string,
  ItemTemplate
>;
export const client = new MongoClient(process.env.MONGODB_URI ?? '');
/** Commands sent, as the service counts them (mongodb_commands_total): one pool checkout each. */
let commands = 0;
/** Requests answered and in flight, as the service counts them (for the benchmark's per-request figures). */
let served = 0;
let inFlight = 0;
client.on('connectionCheckOutStarted', () => {
  commands++;
});
const apiKeys = client.db(process.env.MONGODB_DB_NAME).collection('api_keys');
const KEY_CACHE_MS = Number(process.env.BASELINE_KEY_CACHE_MS ?? 5_000);
const keyCache =
  KEY_CACHE_MS > 0
    ? new LRUCache<string, StoredKey>({ max: 10_000, ttl: KEY_CACHE_MS, updateAgeOnGet: false })
    : null;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Counts the request like the service counts them: every one but the metrics scrape, once answered. */
export function countRequest(req: IncomingMessage, res: ServerResponse): void {
  if (req.url === '/metrics') return;
  inFlight++;
  res.once('close', () => {
    inFlight--;
    if (res.writableFinished) served++;
  });
}

/** The body of GET /metrics: the counters the harness reads. */
export function metricsText(): string {
  return `mongodb_commands_total ${commands}\nhttp_requests_total ${served}\nhttp_requests_in_flight ${inFlight}\n`;
}

export interface StoredKey {
  kind?: string;
  expiresAt?: Date;
  subject?: string;
  teamId?: string;
}

export async function authenticate(req: IncomingMessage): Promise<StoredKey> {
  // Node joins a repeated header of this kind into one string.
  let key = req.headers['x-api-key'] as string | undefined;
  if (!key) key = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!key) throw new HttpError(401, 'no key');
  const digest = createHash('sha256').update(key, 'utf8').digest('hex');
  let found = keyCache?.get(digest) ?? null;
  if (!found) {
    found = await apiKeys.findOne<StoredKey>({ digest });
    if (found) keyCache?.set(digest, found);
  }
  if (!found || (found.expiresAt && found.expiresAt <= new Date()))
    throw new HttpError(401, 'bad key');
  if (found.kind !== 'root' && found.kind !== 'team') throw new HttpError(403, 'root or team only');
  return found;
}

export interface Entry extends ItemTemplate {
  name: string;
  native: Collection;
}

export function collectionOf(name: string | undefined): Entry | undefined {
  const entry = name === undefined ? undefined : collections[name];
  if (!entry || name === undefined) return undefined;
  return { ...entry, name, native: client.db(entry.database).collection(entry.physical) };
}

export function idValue(entry: Entry, value: string): ObjectId | string {
  if (entry.idType === 'objectId') {
    if (!ObjectId.isValid(value) || value.length !== 24) throw new HttpError(404, 'no such item');
    return new ObjectId(value);
  }
  return value;
}

/** An item as the service stores it: the template's constants, the fields, an id, times, owner. */
export function newDocument(
  entry: Entry,
  principal: StoredKey,
  fields: Record<string, unknown>,
  at = new Date(),
): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    ...entry.constants,
    ...fields,
    _id:
      fields._id ?? (entry.idType === 'objectId' ? new ObjectId() : new ObjectId().toHexString()),
    _createdAt: at,
    _updatedAt: at,
  };
  if (doc[entry.ownerField] === undefined)
    doc[entry.ownerField] = principal.subject || principal.teamId;
  return doc;
}

/** An insert's duplicate key refusal, as a 409. */
export function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 11000;
}
