import type { Response } from 'express';
import type { StoredResponse } from './sealed-response';

/** The response headers of HTTP itself that are part of an outcome and replayed with it. */
const OUTCOME_HEADERS = ['content-type', 'etag', 'location', 'link'] as const;

/**
 * The names of the headers a kept response keeps: HTTP's own (OUTCOME_HEADERS) and those the
 * routes add to their outcome (`extra`, named by the modules that set them), in lower case as
 * they are stored and replayed.
 */
export function keptHeaderNames(extra: readonly string[]): readonly string[] {
  return [...new Set([...OUTCOME_HEADERS, ...extra.map((name) => name.toLowerCase())])];
}

/** end() and write() as one signature: the captured calls are passed on unchanged. */
type Passthrough = (...args: unknown[]) => unknown;

/**
 * Holds back the end of `res` until `settle` has seen what is sent — whether the handler's value
 * or the problem the exception filter renders — so that a repeat arriving after the answer finds
 * it kept. `settle` gets null when the response cannot be kept: it was streamed (written before
 * its end) or its body is over `maxBytes`. The response is sent whatever `settle` does. The
 * headers kept are those of `headerNames` the response has (keptHeaderNames).
 */
export function holdResponse(
  res: Response,
  maxBytes: number,
  headerNames: readonly string[],
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
        : { status: res.statusCode, headers: keptHeaders(res, headerNames), body };
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

function keptHeaders(res: Response, names: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = res.getHeader(name);
    if (value !== undefined)
      headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return headers;
}
