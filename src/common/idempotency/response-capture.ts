import type { Response } from 'express';
import type { StoredResponse } from './sealed-response';

/** The response headers that are part of an outcome and replayed with it. */
const KEPT_HEADERS = ['content-type', 'etag', 'location', 'link', 'schema-warnings'] as const;

/** end() and write() as one signature: the captured calls are passed on unchanged. */
type Passthrough = (...args: unknown[]) => unknown;

/**
 * Holds back the end of `res` until `settle` has seen what is sent — whether the handler's value
 * or the problem the exception filter renders — so that a repeat arriving after the answer finds
 * it kept. `settle` gets null when the response cannot be kept: it was streamed (written before
 * its end) or its body is over `maxBytes`. The response is sent whatever `settle` does.
 */
export function holdResponse(
  res: Response,
  maxBytes: number,
  settle: (response: StoredResponse | null) => Promise<void>,
): void {
  const end = res.end.bind(res) as unknown as Passthrough;
  const write = res.write.bind(res) as unknown as Passthrough;
  let streamed = false;
  res.write = ((...args: unknown[]) => {
    streamed = true;
    return write(...args);
  }) as Response['write'];
  res.end = ((...args: unknown[]) => {
    res.end = end as Response['end'];
    res.write = write as Response['write'];
    const body = bodyOf(args);
    const kept =
      streamed || body === null || body.length > maxBytes
        ? null
        : { status: res.statusCode, headers: keptHeaders(res), body };
    const send = () => {
      end(...args);
    };
    settle(kept).then(send, send);
    return res;
  }) as Response['end'];
}

/** The chunk of `end(chunk?, encoding?, callback?)`, as bytes; null for what is not a body. */
function bodyOf(args: unknown[]): Buffer | null {
  const [chunk, encoding] = args;
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return Buffer.alloc(0);
  if (typeof chunk === 'string') {
    return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  }
  if (chunk instanceof Uint8Array) return Buffer.from(chunk);
  return null;
}

function keptHeaders(res: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined)
      headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return headers;
}
