/** Newline-delimited JSON, as GET /export answers and POST /import reads and answers. */
export const NDJSON = 'application/x-ndjson';

/** A transfer that cannot go on: why (`reason`), and the failure underneath (`cause`). */
export class TransferError extends Error {
  constructor(
    /**
     * `cut`: the response ended early (an export, once its resumes ran out); `mismatch`: an end
     * line does not count or digest the items received; `malformed`: a response line is not a
     * record this client reads.
     */
    readonly reason: 'cut' | 'mismatch' | 'malformed',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransferError';
  }
}

/**
 * The complete lines of a body as they arrive, as bytes without their `\n`; what follows the
 * last `\n` when the body ends is a line cut short, and is dropped. Returning early (or a failed
 * read) cancels the body, which closes its connection rather than reading the rest.
 */
export async function* bodyLines(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<Uint8Array, void, undefined> {
  const reader = body.getReader();
  let pending: Uint8Array[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      let start = 0;
      for (let end = value.indexOf(0x0a); end !== -1; end = value.indexOf(0x0a, start)) {
        const piece = value.subarray(start, end);
        yield pending.length === 0 ? piece : concat([...pending, piece]);
        pending = [];
        start = end + 1;
      }
      if (start < value.length) pending.push(value.subarray(start));
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function concat(pieces: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let offset = 0;
  for (const piece of pieces) {
    joined.set(piece, offset);
    offset += piece.length;
  }
  return joined;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A line's JSON value; a line that is not UTF-8 JSON is a TransferError `malformed`. */
export function parseLine(line: Uint8Array): unknown {
  try {
    const value: unknown = JSON.parse(decoder.decode(line));
    return value;
  } catch (error) {
    throw new TransferError('malformed', 'A response line is not UTF-8 JSON.', { cause: error });
  }
}

/**
 * A request body of NDJSON lines read from `lines` as the body is sent, a line at a time (strings
 * as they are, anything else as its JSON), so a line goes out as soon as it is made. `failure` is
 * what `lines` threw, if it did. `stop` ends `lines` should the request end before the body did.
 */
export function requestBody<T>(lines: AsyncIterable<T | string> | Iterable<T | string>): {
  body: ReadableStream<Uint8Array>;
  failure: () => unknown;
  stop: () => void;
} {
  const source = each(lines);
  const encoder = new TextEncoder();
  let failure: unknown;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await source.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(`${lineOf(next.value)}\n`));
      } catch (error) {
        failure ??= error;
        throw error;
      }
    },
    async cancel() {
      await source.return(undefined);
    },
  });
  return {
    body,
    failure: () => failure,
    stop: () => void source.return(undefined).catch(() => undefined),
  };
}

async function* each<T>(items: AsyncIterable<T> | Iterable<T>): AsyncGenerator<T, void, undefined> {
  yield* items;
}

function lineOf(value: unknown): string {
  const line = typeof value === 'string' ? value : JSON.stringify(value);
  // A line break inside would shift the number of every line after it in the results.
  if (line.includes('\n')) throw new TypeError('An NDJSON line cannot hold a line break.');
  return line;
}
