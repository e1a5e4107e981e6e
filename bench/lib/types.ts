// Records that pass between the harness, its load processes and the report.
import type { IdleBackground } from './idle';
import type { Phase, TargetName } from './scenarios';

/** One server and the request to load it with. */
export interface LoadVariant {
  url: string;
  request: {
    method: string;
    paths: string[];
    body?: string;
    /** Per-request headers; `%SEQ%` in a value is replaced like in paths and bodies. */
    headers?: Record<string, string>;
    /** API keys taken in turn with `paths` (same length): request n uses both at n. */
    keys?: string[];
    /** The one status that counts as success; unset: any 2xx. */
    expectStatus?: number;
    /** Sent without the spec's `headers` key (the request authenticates with an access token). */
    keyless?: boolean;
  };
  /** The server process, whose CPU time is read right before and after each measured round. */
  pid?: number;
  /**
   * The server's Prometheus metrics, read right before and after each measured round: the
   * database commands it sent (`mongodb_commands_total`) and its event-loop lag over the round
   * (prom-client's `nodejs_eventloop_lag_*`, reset by every read). Unset: a server without them.
   */
  metricsUrl?: string;
}

/**
 * What bench/load.ts is asked to do (written to a JSON file, its one argument): a warm-up of
 * each variant, then `rounds` measured rounds in which the variants take turns, the order
 * flipping every round. A scenario run is one variant and one round.
 */
export interface LoadSpec {
  connections: number;
  /** Seconds of unmeasured load per variant before the first round. */
  warmup: number;
  /** Seconds of load per variant and round. */
  seconds: number;
  rounds: number;
  /** Seconds per request before it counts as a timeout. */
  timeout: number;
  /** Sent with every request, as they are. */
  headers: Record<string, string>;
  variants: LoadVariant[];
  /** An embedded database server's processes, whose CPU time is read with the server's. */
  databasePids: number[];
}

/** What bench/load.ts prints: one JSON line on stdout, the measured rounds of each variant. */
export interface LoadOutput {
  variants: { rounds: LoadResult[] }[];
}

/** CPU seconds (user + system) used during the measured run. */
export interface CpuUse {
  /** The server under load (service or baseline). */
  target: number;
  /** An embedded database server, when there is one (0 for an external one). */
  database: number;
}

/** One measured run of one variant. */
export interface LoadResult {
  responses: number;
  seconds: number;
  requestsPerSecond: number;
  latencyMs: { mean: number | null; p50: number | null; p99: number | null; max: number | null };
  statusCodes: Record<string, number>;
  /** Responses with another status than the expected one (non-2xx unless the scenario names one). */
  unexpected: number;
  errors: number;
  timeouts: number;
  cpu: CpuUse;
  /**
   * Database commands the server sent for the round's requests (background work included), and
   * the requests it answered (its own count: those the load abandoned at its deadline too, whose
   * commands are counted), both read once it had none in flight.
   */
  commands?: number;
  served?: number;
  /** The server's event-loop lag over the round, when it reports one. */
  eventLoopLagMs?: { p50: number; p99: number; max: number };
}

/** One scenario against one server. */
export interface Run {
  scenario: string;
  title: string;
  route: string;
  phase: Phase;
  baseline?: boolean;
  target: TargetName;
  /** Projects or items in the collection at the time (0 for the other routes). */
  size: number;
  page?: number;
  problems: string[];
  status?: 'ok' | 'failed' | 'unavailable';
  /** Latency of the one probe request sent before the load. */
  probeMs?: number;
  /** Too slow to be loaded: only the probe was measured. */
  tooSlow?: boolean;
  /** How long the harness waited in vain for the machine to settle before the run. */
  notQuiet?: number;
  peakRssKb?: number;
  result?: LoadResult;
}

/** One variant of a feature comparison (lib/comparisons.ts), over all its rounds. */
export interface VariantRun {
  variant: string;
  label: string;
  target: TargetName;
  status: 'ok' | 'failed' | 'unavailable';
  problems: string[];
  probeMs?: number;
  tooSlow?: boolean;
  /** The measured rounds, in the order they ran (warm-ups are not kept). */
  rounds: LoadResult[];
}

/** One feature comparison: its variants run alternately, round after round. */
export interface ComparisonRun {
  comparison: string;
  title: string;
  route: string;
  /** Items in the collection it ran on. */
  size: number;
  /** Why the feature could not be compared (this build does not have it). */
  missing?: string;
  /** What its set-up measured besides the load (e.g. how long a build took). */
  notes?: string[];
  /** What the instance cost with no request (the `idle` comparison). */
  idle?: IdleBackground;
  rounds: number;
  /** Seconds of load per variant and round. */
  seconds: number;
  variants: VariantRun[];
}

/** How long and how often the comparisons run, per mode. */
export interface CompareSettings {
  rounds: number;
  seconds: number;
  /** Seconds of unmeasured load per variant before the first round. */
  warmup: number;
}

export type Mode = 'smoke' | 'default' | 'long';

export interface BenchOptions {
  mode: Mode;
  itemSizes: number[];
  projects: number;
  pageLimit: number;
  duration: number;
  warmup: number;
  connections: number;
  quietMaxMs: number;
  compare: CompareSettings;
  smoke: boolean;
  allowMissingRoutes: boolean;
  /** Only the feature comparisons run. */
  comparisonsOnly: boolean;
  /** Only the SSE fan-out (implies comparisonsOnly's data). */
  fanOutOnly: boolean;
  /** Only the live queries (implies comparisonsOnly's data). */
  liveOnly: boolean;
  /** Only the export and import (implies comparisonsOnly's data). */
  transferOnly: boolean;
  /** Only the JSON Schema comparison (lib/schema-cost.ts; implies comparisonsOnly's data). */
  schemaOnly: boolean;
  /** Only the /health latency during hostile writes (lib/health-latency.ts; comparisonsOnly's data). */
  healthOnly: boolean;
  /** --cost-only: the service-vs-baseline cost comparisons alone. */
  costOnly: boolean;
  /** --only: the ids of the comparisons to run (all when unset). */
  only?: string[];
  /** Only the file uploads and downloads (lib/files.ts; implies comparisonsOnly's data). */
  filesOnly: boolean;
  /** Only the tenant moves (lib/tenant-move.ts). */
  movesOnly: boolean;
  /** Items in the namespace the export and import move. */
  transferItems: number;
  /** The files bench: small files per round, the large file's size (MiB), rounds. */
  files: FilesSettings;
  /** The item count the main scenarios run at. */
  mainSize: number;
  out: string;
  /** Where the raw numbers go (bench/results/…json). */
  json: string;
  /** The command-line options as given, for the report's header. */
  argsLabel: string;
}

export interface FilesSettings {
  smallFiles: number;
  largeMiB: number;
  rounds: number;
}

export interface ReportInfo {
  date: string;
  node: string;
  database: string;
  cpu: string;
  cores: number;
  memoryGiB: string;
  platform: string;
  mainSize: number;
  queryTimeoutMs: number;
  serviceHwmKb: number | undefined;
  /** RATE_LIMIT_STORE as the service resolves it in production. */
  rateLimitStore: string;
  notes: string[];
}

export interface Check {
  name: string;
  status: 'PASS' | 'FAIL' | 'n/a';
  detail: string;
}
