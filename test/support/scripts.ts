// The repository's scripts and the TypeScript compiler as child processes, for the tests of what
// they generate.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

/** The repository root, where scripts run. */
export const ROOT = resolve(__dirname, '..', '..');
export const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

export interface Finished {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a node script to its end, keeping its output. Never synchronously: the generator asks the
 * service, which answers on this process's event loop.
 */
export function run(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<Finished> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...env },
      timeout: 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', fail);
    child.once('close', (status) => done({ status, stdout, stderr }));
  });
}

/** `tsc --strict --noEmit` on one file, as an app with the generated types would compile it. */
export function typeCheck(file: string): Promise<Finished> {
  return run(TSC, [
    '--strict',
    '--noEmit',
    '--pretty',
    'false',
    '--target',
    'es2022',
    '--module',
    'esnext',
    '--moduleResolution',
    'bundler',
    '--types',
    'node',
    '--skipLibCheck',
    file,
  ]);
}
