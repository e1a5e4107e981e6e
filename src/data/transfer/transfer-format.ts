import type { AccessRulesDocument } from '../access/access-rules';
import type { SearchConfig } from '../search/search-config';
import type { SchemaAction } from '../rules/collection-rules';
import { createHash, type Hash } from 'node:crypto';
import type { IndexInfo } from '../storage/tenant-storage';

/**
 * The export format (docs/data.md, "Export and import"): NDJSON, one record per line.
 *
 * - a `manifest` first: the format version, when and what was exported, the change feed's
 *   position and the collections with their indexes and item counts;
 * - then records (`item` lines of a namespace export; an account export adds its own kinds),
 *   then the namespace's files: a `file` line each, followed by its bytes in `file-chunk` lines;
 * - an `end` last: how many lines came and the SHA-256 of them all, each with its `\n`.
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
  /**
   * Its access rules (GET /data/{c}/access), when they are written on it; a root or team key's
   * export only. A manifest without them (an older export) leaves a new collection the defaults.
   */
  access?: AccessRulesDocument;
  /**
   * Its search configuration (GET /data/{c}/search without its state and version: an import
   * builds the words of its own), when it has one; a root or team key's export only.
   */
  search?: SearchConfig;
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
  /** Where a resumed export begins: after this `<collection>/<_id>` or `~files/<file id>`. */
  after?: string;
  collections: ManifestCollection[];
  /** When the export carries files: the stored files (a sub key's: its own) when it began. */
  files?: { count: number; bytes: number };
}

/** Bytes of a file per `file-chunk` line at most: 256 KiB of base64, far below a line's bound. */
export const FILE_CHUNK_BYTES = 192 * 1024;

/**
 * The resume point of the files: `~` sorts after every collection name (they begin with a
 * letter), so `~files/<id>` is a place in the export's order after every item.
 */
export const FILES_RESUME = '~files';

/** A file as an export lists it (FileDto but `size`, `sha256` as the bytes that follow). */
export interface ExportedFile {
  id: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: string;
  owner: string;
}

export interface FileLine {
  type: 'file';
  file: ExportedFile;
}

/** `n`-th piece of a file's bytes, in order, base64 (RFC 4648, padded). */
export interface FileChunkLine {
  type: 'file-chunk';
  id: string;
  n: number;
  data: string;
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
  /** The lines between the manifest and this one (item, file and file-chunk lines). */
  items: number;
  /** When the export carries files: how many `file` lines came. */
  files?: number;
  /** SHA-256 (hex) of those lines, each with its `\n`, in order. */
  sha256: string;
}

/** The running digest of the records between a manifest and its `end`. */
export class RecordDigest {
  private hash: Hash = createHash('sha256');
  private lines = 0;
  private fileLines = 0;

  /** A `file` line (it is added as any line, and counted as a file). */
  addFile(line: string | Buffer): void {
    this.add(line);
    this.fileLines += 1;
  }

  /** A line as written: its text, or (import) the bytes it was read as, without the `\n`. */
  add(line: string | Buffer): void {
    this.hash.update(line);
    this.hash.update('\n');
    this.lines += 1;
  }

  /** The end record of what was added (`withFiles`: with its file count), and a fresh start. */
  end(withFiles = false): EndRecord {
    const record: EndRecord = {
      type: 'end',
      items: this.lines,
      ...(withFiles ? { files: this.fileLines } : {}),
      sha256: this.hash.digest('hex'),
    };
    this.hash = createHash('sha256');
    this.lines = 0;
    this.fileLines = 0;
    return record;
  }
}

/**
 * `after=<collection>/<_id>` (or `~files/<file id>`): collection names have no `/`, so the first
 * one splits.
 */
export function parseResumePoint(after: string): { collection: string; id: string } | null {
  const slash = after.indexOf('/');
  if (slash <= 0 || slash === after.length - 1) return null;
  return { collection: after.slice(0, slash), id: after.slice(slash + 1) };
}
