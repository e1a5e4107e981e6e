// Records that pass between the harness, its load processes and the report.
import type { Phase, TargetName } from './scenarios';

/** What bench/load.ts is asked to do (written to a JSON file, its one argument). */
export interface LoadSpec {
  url: string;
  connections: number;
  duration: number;
  warmup: number;
  /** Seconds per request before it counts as a timeout. */
  timeout: number;
  headers: Record<string, string>;
  request: { method: string; paths: string[]; body?: string };
}

/** What bench/load.ts prints: one JSON line on stdout. */
export interface LoadResult {
  responses: number;
  seconds: number;
  requestsPerSecond: number;
  latencyMs: { mean: number | null; p50: number | null; p99: number | null; max: number | null };
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
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
  smoke: boolean;
  allowMissingRoutes: boolean;
  /** The item count the main scenarios run at. */
  mainSize: number;
  out: string;
  /** The command-line options as given, for the report's header. */
  argsLabel: string;
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
  notes: string[];
}

export interface Check {
  name: string;
  status: 'PASS' | 'FAIL' | 'n/a';
  detail: string;
}
