// The few HTTP calls the harness makes itself (set-up and one probe before each load run).

const REQUEST_TIMEOUT_MS = 120_000;

export interface ApiResponse {
  status: number;
  /** The parsed JSON body; undefined when there is none or it is not JSON. */
  body: unknown;
  text: string;
  headers: Headers;
  ms: number;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  /** Sent as it is (a scenario's body template); wins over `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** A property of a JSON object; undefined for anything else. */
export function prop(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

export function isArray(value: unknown): value is unknown[] {
  return Array.isArray(value);
}

/** `code` and `detail` of a problem+json body, when it is one. */
export function problemOf(res: ApiResponse): { code?: string; detail?: string } {
  const code = prop(res.body, 'code');
  const detail = prop(res.body, 'detail');
  return {
    code: typeof code === 'string' ? code : undefined,
    detail: typeof detail === 'string' ? detail : undefined,
  };
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  { key, body, rawBody, headers = {} }: CallOptions = {},
): Promise<ApiResponse> {
  const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
  const started = performance.now();
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: payload,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return {
    status: res.status,
    body: json,
    text,
    headers: res.headers,
    ms: performance.now() - started,
  };
}

/** The service answers an unknown route with 404 and code ROUTE_NOT_FOUND (see the problem filter). */
export function routeMissing(res: ApiResponse): boolean {
  return res.status === 404 && problemOf(res).code === 'ROUTE_NOT_FOUND';
}

/**
 * Throws with the status and problem details when a set-up call did not answer `status`. The body
 * is then the service's documented response of that call, typed by the caller.
 */
export function expectStatus<T>(res: ApiResponse, status: number, what: string): T {
  if (res.status !== status) {
    const { code, detail } = problemOf(res);
    const problem = code ? `${code}: ${detail ?? ''}` : res.text.slice(0, 300);
    throw new Error(`${what}: expected ${status}, got ${res.status} (${problem})`);
  }
  return res.body as T;
}
