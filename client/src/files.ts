import type { components } from './schema.js';
import {
  ApiProblemError,
  apiHeaders,
  baseUrlOf,
  problemErrorOf,
  problemOf,
  type ApiClientOptions,
} from './http.js';

type Schemas = components['schemas'];

/** A stored file, as POST /files, GET /files and GET /files/{id} answer it. */
export type FileInfo = Schemas['FileDto'];

/** A signed download link (POST /files/{id}/links). */
export type FileLink = Schemas['FileLinkDto'];

/**
 * What an upload can send: a `Blob` (a browser `File` too), bytes, a web `ReadableStream`, or any
 * async iterable of bytes (a Node `Readable`, such as `fs.createReadStream(path)`).
 */
export type UploadSource =
  Blob | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface FileRequestOptions extends ApiClientOptions {
  /** Stops the request: it is aborted and the call throws. */
  signal?: AbortSignal;
}

export interface UploadFileOptions {
  /** The file's name: 1–255 characters, no control characters, no `/` or `\`. */
  name: string;
  /** The file's type; default: the Blob's own type, else `application/octet-stream`. */
  contentType?: string;
  /**
   * The body's length in bytes, sent as Content-Length, for a stream whose length is known (a
   * Blob's and bytes' is always sent). With it the service checks the quota and FILE_MAX_BYTES
   * before a byte is stored; without it the body is chunked and reserves the quota as it grows.
   * Browsers do not let a page set Content-Length: there it only matters for Node.
   */
  size?: number;
  /** Names the upload: a retry under the same key answers the first upload's file. */
  idempotencyKey?: string;
}

/** One byte range, as the Range header has it: `end` included, `last` the final bytes. */
export type ByteRange = { start: number; end?: number } | { last: number };

export interface DownloadOptions {
  /** Only these bytes: a 206 with Content-Range (the whole file when it cannot apply). */
  range?: ByteRange;
  /** The ETag held: a 304 without a body when the file is the same. */
  ifNoneMatch?: string;
  signal?: AbortSignal;
  /** A fetch implementation other than the global one. */
  fetch?: ApiClientOptions['fetch'];
}

/**
 * POST /files with the raw bytes as the body, streamed as `source` gives them (`duplex: 'half'`:
 * Node ≥ 20's fetch streams over HTTP/1.1; among browsers only Chromium's does, over HTTP/2). A
 * Blob or bytes go with their Content-Length. A refusal (400, 409 FILE_QUOTA_EXCEEDED, 413) is an
 * ApiProblemError.
 *
 * ```ts
 * const file = await uploadFile({ baseUrl, apiKey }, createReadStream('report.pdf'), {
 *   name: 'report.pdf', contentType: 'application/pdf', size: (await stat('report.pdf')).size });
 * ```
 */
export async function uploadFile(
  options: FileRequestOptions,
  source: UploadSource,
  file: UploadFileOptions,
): Promise<FileInfo> {
  const blobType = source instanceof Blob ? source.type : '';
  const headers: Record<string, string> = {
    ...apiHeaders(options),
    'Content-Type': file.contentType ?? (blobType || 'application/octet-stream'),
  };
  if (file.idempotencyKey !== undefined) headers['Idempotency-Key'] = file.idempotencyKey;
  const whole = source instanceof Blob || source instanceof Uint8Array;
  if (!whole && file.size !== undefined) headers['Content-Length'] = String(file.size);
  const url = `${baseUrlOf(options)}/files?name=${encodeURIComponent(file.name)}`;
  const response = await (options.fetch ?? fetch)(
    new Request(url, {
      method: 'POST',
      headers,
      ...(whole ? { body: wholeBody(source) } : { body: streamOf(source), duplex: 'half' }),
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
  if (response.status !== 201) throw await problemErrorOf(response);
  const body: unknown = await response.json();
  if (!isFileInfo(body)) throw new Error('The answer to POST /files is not a file.');
  return body;
}

/**
 * A Blob as it is; bytes as a view of their ArrayBuffer (no copy), which is what a browser's fetch
 * takes as a body (a view of a SharedArrayBuffer is copied).
 */
function wholeBody(source: Blob | Uint8Array): Blob | Uint8Array<ArrayBuffer> {
  if (source instanceof Blob) return source;
  const { buffer } = source;
  return buffer instanceof ArrayBuffer
    ? new Uint8Array(buffer, source.byteOffset, source.byteLength)
    : source.slice();
}

/**
 * GET /files/{id}/content: the Response, its body not read yet — 200 (the whole file), 206 (the
 * range asked for, with Content-Range) or 304 (`ifNoneMatch` names the ETag). Any other answer
 * (404, 416) is an ApiProblemError. The ETag is the quoted SHA-256 of the bytes.
 *
 * ```ts
 * const res = await downloadFile(options, file.id, { range: { start: 0, end: 1023 } });
 * const firstKiB = new Uint8Array(await res.arrayBuffer());
 * ```
 */
export function downloadFile(
  options: FileRequestOptions,
  id: string,
  download: DownloadOptions = {},
): Promise<Response> {
  return fetchContent(`${baseUrlOf(options)}/files/${encodeURIComponent(id)}/content`, {
    ...download,
    headers: apiHeaders(options),
    fetch: download.fetch ?? options.fetch,
    signal: download.signal ?? options.signal,
  });
}

/**
 * GET of a signed link (its `url`), without a key: answered like downloadFile. A link that
 * expired is an ApiProblemError 410 FILE_LINK_EXPIRED, one this service did not sign 403
 * FILE_LINK_INVALID, one of a deleted file 404.
 */
export function downloadFileLink(url: string, download: DownloadOptions = {}): Promise<Response> {
  return fetchContent(url, { ...download, headers: {} });
}

/**
 * POST /files/{id}/links: a link anyone holding it can download the file with, without a key,
 * for `expiresInSeconds` (at most FILE_LINK_MAX_SECONDS) or until the file is deleted.
 */
export async function createFileLink(
  options: FileRequestOptions,
  id: string,
  expiresInSeconds: number,
): Promise<FileLink> {
  const response = await (options.fetch ?? fetch)(
    new Request(`${baseUrlOf(options)}/files/${encodeURIComponent(id)}/links`, {
      method: 'POST',
      headers: { ...apiHeaders(options), 'Content-Type': 'application/json' },
      body: JSON.stringify({ expiresInSeconds }),
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
  if (response.status !== 201) throw await problemErrorOf(response);
  const body: unknown = await response.json();
  if (!isFileLink(body)) throw new Error('The answer to POST /files/{id}/links is not a link.');
  return body;
}

/** The Range header of one range. */
export function rangeHeader(range: ByteRange): string {
  return 'last' in range ? `bytes=-${range.last}` : `bytes=${range.start}-${range.end ?? ''}`;
}

async function fetchContent(
  url: string,
  options: DownloadOptions & { headers: Record<string, string> },
): Promise<Response> {
  const headers = { ...options.headers };
  if (options.range) headers.Range = rangeHeader(options.range);
  if (options.ifNoneMatch !== undefined) headers['If-None-Match'] = options.ifNoneMatch;
  const response = await (options.fetch ?? fetch)(
    new Request(url, { headers, ...(options.signal ? { signal: options.signal } : {}) }),
  );
  if (response.status === 200 || response.status === 206 || response.status === 304)
    return response;
  throw await problemErrorOf(response);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The members of an answer this client relies on are checked, not trusted. */
function isFileInfo(value: unknown): value is FileInfo {
  return (
    isObject(value) &&
    typeof value.id === 'string' &&
    typeof value.name === 'string' &&
    typeof value.size === 'number' &&
    typeof value.contentType === 'string' &&
    typeof value.sha256 === 'string' &&
    typeof value.createdAt === 'string' &&
    typeof value.owner === 'string'
  );
}

function isFileLink(value: unknown): value is FileLink {
  return (
    isObject(value) &&
    typeof value.url === 'string' &&
    typeof value.path === 'string' &&
    typeof value.expiresAt === 'string'
  );
}

/** A web stream of the source, pulled only as fast as the request sends it. */
function streamOf(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): ReadableStream<Uint8Array> {
  if (source instanceof ReadableStream) return source;
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}

export interface UploadWithProgressOptions extends Pick<UploadFileOptions, 'name' | 'contentType'> {
  /** Called with the bytes sent and the total as the body goes out, and when all of it is sent. */
  onProgress?: (sent: number, total: number) => void;
  /** Stops the upload: the request is aborted and the call throws. */
  signal?: AbortSignal;
}

/** The parts of a browser's XMLHttpRequest an upload with progress uses. */
interface UploadRequest {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body: Blob): void;
  abort(): void;
  readonly status: number;
  readonly response: unknown; // the JSON answer (responseType 'json'), else null
  responseType: string;
  readonly upload: {
    onprogress: ((event: { loaded: number; total: number }) => void) | null;
    onload: (() => void) | null;
  };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}

/** The browser's XMLHttpRequest; Node has none. */
declare const XMLHttpRequest: (new () => UploadRequest) | undefined;

/**
 * POST /files from a browser, reporting the upload's progress: fetch cannot tell how much of a
 * body went out, XMLHttpRequest can. Answers as uploadFile does (the file, or an
 * ApiProblemError); only where XMLHttpRequest exists.
 */
export function uploadFileWithProgress(
  options: ApiClientOptions,
  blob: Blob,
  file: UploadWithProgressOptions,
): Promise<FileInfo> {
  if (typeof XMLHttpRequest === 'undefined')
    return Promise.reject(new Error('uploadFileWithProgress needs XMLHttpRequest (a browser).'));
  const request = new XMLHttpRequest();
  const { signal, onProgress } = file;
  return new Promise<FileInfo>((resolve, reject) => {
    const abort = () => request.abort();
    const settle = (outcome: () => void) => () => {
      signal?.removeEventListener('abort', abort);
      outcome();
    };
    request.responseType = 'json';
    request.open('POST', `${baseUrlOf(options)}/files?name=${encodeURIComponent(file.name)}`);
    const type = file.contentType ?? (blob.type || 'application/octet-stream');
    for (const [name, value] of Object.entries({ ...apiHeaders(options), 'Content-Type': type }))
      request.setRequestHeader(name, value);
    // A total of 0 means the browser could not tell it: the Blob's size is the body's.
    request.upload.onprogress = (event) => onProgress?.(event.loaded, event.total || blob.size);
    request.upload.onload = () => onProgress?.(blob.size, blob.size);
    request.onload = settle(() => {
      const body = request.response;
      if (request.status !== 201) reject(new ApiProblemError(request.status, problemOf(body)));
      else if (isFileInfo(body)) resolve(body);
      else reject(new Error('The answer to POST /files is not a file.'));
    });
    request.onerror = settle(() => reject(new TypeError('The upload failed: no answer came.')));
    request.onabort = settle(() => {
      const reason: unknown = signal?.reason;
      reject(reason instanceof Error ? reason : new Error('The upload was aborted.'));
    });
    signal?.addEventListener('abort', abort, { once: true });
    request.send(blob);
    if (signal?.aborted) abort();
  });
}
