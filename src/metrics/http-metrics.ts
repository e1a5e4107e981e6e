import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { RATE_LIMIT_REASONS, rateLimitReasonOf } from '../rate-limit';
import type { RequestObserver } from '../common/http/request-context';

/** Where the metrics are served; scrapes are left out of the request metrics. */
export const METRICS_PATH = '/metrics';

/** The route label of every request no route handled: unknown paths, 405s, bodies refused before routing. */
export const UNMATCHED_ROUTE = '(unmatched)';

/** Methods kept as they are; any other method (Node parses some 30) is counted as OTHER. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** Seconds: from a health probe (~1 ms) to the default QUERY_TIMEOUT_MS (5 s); slower: +Inf. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** `2xx` … `5xx`, from the status code. */
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/** Express sets `route` on the request when one of its routes matches. */
type RoutedRequest = IncomingMessage & { route?: { path?: unknown } };

/**
 * The route template that handled the request (`/data/:collection/index`), never the raw path:
 * templates come from the code, so their number is fixed whatever paths clients send.
 */
export function routeLabelOf(req: RoutedRequest): string {
  const path = req.route?.path;
  // A wildcard route would be a catch-all middleware mount, not an endpoint.
  return typeof path === 'string' && !path.includes('*') ? path : UNMATCHED_ROUTE;
}

function isScrape(url: string | undefined): boolean {
  if (!url?.startsWith(METRICS_PATH)) return false;
  const rest = url.slice(METRICS_PATH.length);
  return rest === '' || rest === '/' || rest.startsWith('?') || rest.startsWith('/?');
}

/**
 * Requests by route template, method and status; their durations by route template, method and
 * status class; requests in flight; 429s by reason. The histogram has the status class rather
 * than the code because each of its label combinations costs 13 series: by code, the ~250
 * documented route × method × status combinations alone could pass 3,000 series.
 */
export class HttpMetrics {
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route' | 'status_class'>;
  private readonly inFlight: Gauge;
  private readonly rateLimited: Counter<'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving an HTTP request to sending the last byte of its response, by route template, method and status class',
      labelNames: ['method', 'route', 'status_class'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.inFlight = new Gauge({
      name: 'http_requests_in_flight',
      help: 'HTTP requests received whose response has not been sent yet',
      registers,
    });
    this.rateLimited = new Counter({
      name: 'http_rate_limit_rejections_total',
      help: 'Requests answered 429: rate_limit (per key, or per address without a key), auth_failures (failed-authentication budget of the address)',
      labelNames: ['reason'],
      registers,
    });
    // Both series exist from the start, so a rate of rejections is 0 rather than absent.
    for (const reason of RATE_LIMIT_REASONS) this.rateLimited.inc({ reason }, 0);
  }

  /**
   * Watches every request (the first middleware's observer, src/common/http/request-context.ts),
   * so that every answer is timed and counted, those of the body parser and the not-found
   * handler included. The route is read when the connection is done with the request, after
   * routing.
   */
  readonly observe: RequestObserver = (req: RoutedRequest, res) => {
    if (isScrape(req.url)) return undefined;
    this.inFlight.inc();
    return (ms, finished) => {
      this.inFlight.dec();
      // A connection closed before the response was sent has no status to count.
      if (finished) this.record(req, res, ms / 1000);
    };
  };

  private record(req: RoutedRequest, res: ServerResponse, seconds: number): void {
    const method = req.method && METHODS.has(req.method) ? req.method : 'OTHER';
    const route = routeLabelOf(req);
    const status = res.statusCode;
    this.requests.inc({ method, route, status: String(status) });
    const statusClass = STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'other';
    this.duration.observe({ method, route, status_class: statusClass }, seconds);
    const reason = rateLimitReasonOf(res);
    if (reason) this.rateLimited.inc({ reason });
  }
}
