import { join, resolve } from 'node:path';

// The harness runs compiled, from dist-dev/bench/ (see bench/tsconfig.build.json).
export const ROOT = resolve(__dirname, '..', '..', '..');
/** The service as `nest build` compiled it: what the benchmark measures. */
export const SERVICE_DIST = join(ROOT, 'dist');
export const RESULTS = join(ROOT, 'bench', 'results');
