// A server's memory over a long run, once a second: its RSS and, when it serves prom-client's
// process metrics, the heap figures that tell what grows when RSS does (live objects, the space V8
// keeps for them, buffers outside the heap). A growing working set and a leak look alike in a peak;
// the trace tells them apart (a leak keeps climbing to the end).
import { memoryOf } from './processes';

const HEAP_METRICS = {
  heapUsed: 'nodejs_heap_size_used_bytes',
  heapTotal: 'nodejs_heap_size_total_bytes',
  oldSpace: 'nodejs_heap_space_size_total_bytes{space="old"}',
  external: 'nodejs_external_memory_bytes',
} as const;
type HeapFigure = keyof typeof HEAP_METRICS;

/** Full (mark-compact) collections so far: when the old space's garbage is let go. */
const MAJOR_GCS = 'nodejs_gc_duration_seconds_count{kind="major"}';

/** One sample: seconds since the start, then MiB, and the major collections so far. */
export type MemorySample = { s: number; rss: number; majorGcs?: number } & Partial<
  Record<HeapFigure, number>
>;

const SAMPLE_MS = 1000;
const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

function metricValue(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Samples until stop(), which returns every sample (the first one taken at once). */
export function startMemoryTrace(
  pid: number | undefined,
  metricsUrl: string | undefined,
): { stop(): Promise<MemorySample[]> } {
  const started = performance.now();
  const samples: MemorySample[] = [];
  const sample = async (): Promise<void> => {
    const s = Math.round((performance.now() - started) / 100) / 10;
    const rssKb = memoryOf(pid)?.rssKb;
    if (rssKb === undefined) return;
    const taken: MemorySample = { s, rss: mib(rssKb * 1024) };
    if (metricsUrl) {
      try {
        const text = await (await fetch(metricsUrl)).text();
        for (const [figure, name] of Object.entries(HEAP_METRICS) as [HeapFigure, string][]) {
          const value = metricValue(text, name);
          if (value !== undefined) taken[figure] = mib(value);
        }
        taken.majorGcs = metricValue(text, MAJOR_GCS);
      } catch {
        // RSS alone this time.
      }
    }
    samples.push(taken);
  };
  // One sample at a time: a slow metrics answer delays the next rather than piling up.
  let running = sample();
  const timer = setInterval(() => {
    running = running.then(sample);
  }, SAMPLE_MS);
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await sample();
      return samples;
    },
  };
}

/** The largest RSS in each quarter of the run (MiB): a plateau, or a climb to the end. */
export function quarterPeaks(samples: MemorySample[]): number[] {
  const end = samples.at(-1)?.s ?? 0;
  return [1, 2, 3, 4].map((q) =>
    Math.max(
      0,
      ...samples.filter((x) => x.s > ((q - 1) * end) / 4 && x.s <= (q * end) / 4).map((x) => x.rss),
    ),
  );
}

/** When the major collections during the run happened (seconds from its start). */
export function majorGcTimes(samples: MemorySample[]): number[] {
  const times: number[] = [];
  let previous = samples[0]?.majorGcs;
  for (const sample of samples) {
    if (sample.majorGcs === undefined) continue;
    if (previous !== undefined && sample.majorGcs > previous) times.push(sample.s);
    previous = sample.majorGcs;
  }
  return times;
}

/** Each heap figure at the start and at its largest. */
export function heapRange(
  samples: MemorySample[],
): Partial<Record<HeapFigure, { before: number; peak: number }>> {
  const range: Partial<Record<HeapFigure, { before: number; peak: number }>> = {};
  for (const figure of Object.keys(HEAP_METRICS) as HeapFigure[]) {
    const values = samples.map((x) => x[figure]).filter((v): v is number => v !== undefined);
    const [before] = values;
    if (before !== undefined) range[figure] = { before, peak: Math.max(...values) };
  }
  return range;
}
