import type { SchemaAction } from '../rules/collection-rules';
import { createHash, type Hash } from 'node:crypto';
import type { IndexInfo } from '../storage/tenant-storage';

/**
 * The export format (docs/data.md, "Export and import"): NDJSON, one record per line.
 *
 * - a `manifest` first: the format version, when and what was exported, the change feed's
 *   position and the collections with their indexes and item counts;
 * - then records (`item` lines of a namespace export; an account export adds its own kinds);
 * - an `end` last: how many records came and the SHA-256 of their lines, each with its `\n`.
 *
 * FORMAT changes only when a reader of the current format would misread a file; everything added
 * later is a new optional member, which readers ignore.
 */
export const FORMAT = 1;

/** A collection as the manifest describes it. */
export interface ManifestCollection {
  name: string;
  /** Its indexes but `_id_`, which every collection has. */
  indexes: IndexInfo[];
  /** Its items (a sub key's: the ones it owns) when the export began. */
  count: number;
  /** Its JSON Schema and the schema's action, when it has one (GET /data/{c}/schema). */
  schema?: { schema: Record<string, unknown>; action: SchemaAction };
  /** When its items expire, when it has a rule (GET /data/{c}/expiry). */
  expiry?: { field: string; afterSeconds: number };
}

export interface NamespaceManifest {
  type: 'manifest';
  format: typeof FORMAT;
  exportedAt: string;
  namespace: { kind: 'user' | 'team'; branch: string };
  /** A sub key's export holds the items whose `field` is `value`. */
  owner?: { field: string; value: string };
  /** The newest event when the export began (GET /events?after=); null without a change feed. */
  feedPosition: string | null;
  /** Where a resumed export begins: after this `<collection>/<_id>`. */
  after?: string;
  collections: ManifestCollection[];
}

export interface ItemRecord {
  type: 'item';
  /** The branch, in an account export (which spans branches). */
  branch?: string;
  collection: string;
  item: Record<string, unknown>;
}

export interface EndRecord {
  type: 'end';
  /** The records between the manifest and this line (item lines, in a namespace export). */
  items: number;
  /** SHA-256 (hex) of those lines, each with its `\n`, in order. */
  sha256: string;
}

/** The running digest of the records between a manifest and its `end`. */
export class RecordDigest {
  private hash: Hash = createHash('sha256');
  private lines = 0;

  /** A line as written: its text, or (import) the bytes it was read as, without the `\n`. */
  add(line: string | Buffer): void {
    this.hash.update(line);
    this.hash.update('\n');
    this.lines += 1;
  }

  /** The end record of what was added, and a fresh start. */
  end(): EndRecord {
    const record: EndRecord = { type: 'end', items: this.lines, sha256: this.hash.digest('hex') };
    this.hash = createHash('sha256');
    this.lines = 0;
    return record;
  }
}

/** `after=<collection>/<_id>`: collection names have no `/`, so the first one splits. */
export function parseResumePoint(after: string): { collection: string; id: string } | null {
  const slash = after.indexOf('/');
  if (slash <= 0 || slash === after.length - 1) return null;
  return { collection: after.slice(0, slash), id: after.slice(slash + 1) };
}
