'use strict';
// The few HTTP calls the harness makes itself (set-up and one probe before each load run).

const REQUEST_TIMEOUT_MS = 120_000;

async function call(baseUrl, method, path, { key, body, rawBody } = {}) {
  const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
  const started = performance.now();
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: payload,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let json;
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
function routeMissing(res) {
  return res.status === 404 && res.body?.code === 'ROUTE_NOT_FOUND';
}

/** Throws with the status and problem details when a set-up call did not answer `status`. */
function expectStatus(res, status, what) {
  if (res.status !== status) {
    const detail = res.body?.code
      ? `${res.body.code}: ${res.body.detail ?? ''}`
      : res.text.slice(0, 300);
    throw new Error(`${what}: expected ${status}, got ${res.status} (${detail})`);
  }
  return res.body;
}

module.exports = { call, routeMissing, expectStatus };
