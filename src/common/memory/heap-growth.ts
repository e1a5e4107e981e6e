import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the heap grow past what was live after a full collection before it collects
 * again: `percent` over the live size (V8's own factor, 0, is up to 4× on a small heap). A
 * service streams many short-lived objects through the heap (an import's items wait tens of
 * milliseconds for their batch's round trips, long enough to be promoted), and under V8's factor
 * that garbage piles up in the old space: an import of 100,000 items grew the process by 80 MiB
 * of it. A bound of 20 % over a heap of about 45 MiB keeps that under 10 MiB, for a full
 * collection (10–40 ms, mostly incremental) every few seconds while such a stream runs.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
