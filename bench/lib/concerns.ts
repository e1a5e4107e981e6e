// What a CPU sample of the service was spent on, by concern rather than by package: the profile's
// "by concern" table (bench/profile.ts; docs/benchmarks.md, "CPU and database round trips per
// request"). A sample belongs to the innermost frame of the service's own code on its stack (the
// code that asked for the work, the libraries it called included), except NestJS's own code, the
// interceptor pipeline, GC and the routing under the service's middleware, and a sample with no
// service frame, which are told by where they run. The framework floor has no code of its own in
// dist/: its samples fall into those library and runtime concerns, which is what makes the two
// comparable.

/** A frame as a .cpuprofile names it. */
export interface Frame {
  functionName: string;
  url: string;
}

/** One sample's stack: its leaf first. `own`: the innermost service frame's path under dist/. */
interface Sample {
  own: string | undefined;
  leaf: Frame;
  /** The URLs of the frames from the leaf up to the innermost service frame (excluded). */
  below: string[];
}

const ownIs =
  (pattern: RegExp) =>
  (s: Sample): boolean =>
    s.own !== undefined && pattern.test(s.own);
/**
 * The service's middleware (src/common/http): what runs under one of them is the router's work
 * for the layers after it (each calls `next()` in place) or its own, both routing. The request
 * context is among them: its request id and `Cache-Control` are a few microseconds of it.
 */
const MIDDLEWARE =
  /^common\/http\/(request-context|body|cors|query-keys|concrete-path-methods|route-methods)/;
const leafIn =
  (pattern: RegExp) =>
  (s: Sample): boolean =>
    pattern.test(s.leaf.url);

/** The concerns, tried in this order; the last takes whatever is left. */
export const CONCERNS: readonly (readonly [string, (s: Sample) => boolean])[] = [
  // NestJS runs a route with an interceptor through rxjs with AsyncResource bindings, whichever
  // interceptor it is: the work under Nest's consumer or rxjs is the pipeline's.
  [
    "NestJS's interceptor pipeline (rxjs, AsyncResource)",
    (s) => s.below.some((url) => /interceptors-consumer|node_modules\/rxjs\//.test(url)),
  ],
  ['NestJS (routing to the handler, guards, parameters)', leafIn(/node_modules\/@nestjs\//)],
  ['garbage collection', (s) => s.leaf.functionName === '(garbage collector)'],
  // A middleware of the service that hands the request on (`next()`) has the router's work for
  // the layers after it on its stack: that work, and the middleware libraries', is routing.
  [
    'middleware and routing (Express, helmet, CORS, body, query keys, 405s)',
    (s) =>
      ownIs(MIDDLEWARE)(s) ||
      leafIn(
        /node_modules\/(router|express|body-parser|raw-body|parseurl|content-type|type-is|helmet)\//,
      )(s),
  ],
  ['idempotency', ownIs(/^idempotency\//)],
  [
    'change feed: the intent before a write, the event after',
    ownIs(/^events\/|^common\/batching\/|grouped-inserts/),
  ],
  [
    'validation (ValidationPipe, class-transformer, class-validator, the JSON guard)',
    (s) =>
      ownIs(/^common\/(http\/validation|json\/)/)(s) ||
      leafIn(/node_modules\/class-(validator|transformer)\//)(s),
  ],
  ['authentication (the key guard, the key digest, grants)', ownIs(/^auth\//)],
  ['rate limit', (s) => ownIs(/^rate-limit\//)(s) || leafIn(/@nestjs\/throttler\//)(s)],
  ['usage metering', ownIs(/^usage\//)],
  ['request id, request log, metrics', ownIs(/^common\/http\/(logger|trace-id)|^metrics\//)],
  [
    'move gates, placements, registry, plans',
    ownIs(/^placement\/|^data\/collections\/|^common\/cache\/|^plans\//),
  ],
  ['the item: its read or write, its JSON', ownIs(/^data\/|^common\/mongo\//)],
  [
    'writing the answer (status, headers, socket)',
    (s) =>
      ownIs(/^common\/http\/(json-reply|reply|etag|conditional)/)(s) ||
      s.leaf.functionName === 'writev' ||
      s.leaf.functionName === 'writeBuffer' ||
      s.leaf.url === 'node:_http_outgoing',
  ],
  [
    'MongoDB driver and BSON (commands, replies)',
    leafIn(/node_modules\/(mongodb|bson|mongoose)\//),
  ],
  ['Node.js and the rest (HTTP parsing, events, streams, promises)', () => true],
];

/**
 * The concern of one sample, from its stack (leaf first); `ownPath` gives a frame's path under
 * the service's dist/ directory, or undefined for any other code.
 */
export function concernOf(stack: Frame[], ownPath: (url: string) => string | undefined): string {
  const below: string[] = [];
  let own: string | undefined;
  for (const frame of stack) {
    own = ownPath(frame.url);
    if (own !== undefined) break;
    below.push(frame.url);
  }
  const sample: Sample = { own, leaf: stack[0] ?? { functionName: '', url: '' }, below };
  return (CONCERNS.find(([, matches]) => matches(sample)) ?? CONCERNS[CONCERNS.length - 1]!)[0];
}
