import contentDisposition from 'content-disposition';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import type { FileContents } from './file-contents';
import type { FileRecord } from './file-records.repository';
import { RangeNotSatisfiableError } from './files.errors';
import { presentationOf } from './media-type';

/** The strong ETag of a file's bytes: their SHA-256. */
export function fileETag(file: Pick<FileRecord, 'sha256'>): string {
  return `"${file.sha256 ?? ''}"`;
}

/** Whether If-None-Match names the ETag (or `*`); weak tags compare by their value. */
function matchesNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag);
}

/** The one range a request asks for; null: the whole file (no Range, an old If-Range, several ranges). */
function rangeOf(
  req: Request,
  file: FileRecord,
  etag: string,
): { start: number; end: number } | null {
  if (req.headers.range === undefined) return null;
  const ifRange = req.headers['if-range'];
  if (typeof ifRange === 'string' && ifRange.trim() !== etag) return null;
  const ranges = req.range(file.size, { combine: true });
  if (ranges === undefined || ranges === -2) return null;
  if (ranges === -1) throw new RangeNotSatisfiableError(file.size);
  if (ranges.length !== 1 || ranges.type !== 'bytes') return null;
  const [range] = ranges;
  return range ? { start: range.start, end: range.end + 1 } : null;
}

/**
 * Answers a download: 304 when If-None-Match names the ETag; 206 with Content-Range for one
 * satisfiable byte range (416 for an unsatisfiable one; several ranges get the whole file); 200
 * otherwise. Content-Type is the stored type normalised (application/octet-stream when it is not
 * one valid media type); Content-Disposition carries the name (RFC 6266: an ASCII fallback and
 * `filename*`) and is `inline` only for the short list of types a browser shows without running
 * anything (presentationOf), `attachment` for every other; nosniff and a sandboxing CSP always.
 */
export async function sendFile(
  req: Request,
  res: Response,
  file: FileRecord,
  contents: FileContents,
): Promise<void> {
  const etag = fileETag(file);
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  if (matchesNoneMatch(req.headers['if-none-match'], etag)) {
    res.status(304).end();
    return;
  }
  const range = rangeOf(req, file, etag);
  const { type, disposition } = presentationOf(file.contentType);
  res.setHeader('Content-Type', type);
  res.setHeader(
    'Content-Disposition',
    // An ASCII fallback name, and the exact one in `filename*` when they differ.
    contentDisposition(file.name, {
      type: disposition,
      fallback: file.name.replace(/[^\x20-\x7e]/g, '?'),
    }),
  );
  if (range) {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end - 1}/${file.size}`);
    res.setHeader('Content-Length', String(range.end - range.start));
  } else {
    res.status(200);
    res.setHeader('Content-Length', String(file.size));
  }
  if (req.method === 'HEAD' || file.size === 0) {
    res.end();
    return;
  }
  await pipeline(contents.read(file.location, file.id, range ?? undefined), res);
}
