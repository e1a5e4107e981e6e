// `npm run client:build`: the @profile-data/client package's two builds from src/ with
// tsconfig.package.json — CommonJS in dist/cjs, ES modules in dist/esm — each with its
// declarations, the generated schema.d.ts (tsc does not copy the declaration files it reads) and
// a package.json naming its module type, so that Node and TypeScript read each build as what it
// is. Plain JavaScript, so that the console's build (and the Docker image's) needs nothing compiled
// first. Fails when the package's version is not the service's: a client of version x.y.z is
// generated from the document the service of version x.y.z serves.
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLIENT = fileURLToPath(new URL('..', import.meta.url));
const ROOT = join(CLIENT, '..');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const BUILDS = [
  { dir: 'cjs', type: 'commonjs', flags: [] },
  { dir: 'esm', type: 'module', flags: ['--module', 'es2022', '--moduleResolution', 'bundler'] },
];

/** @param {string} file */
const versionOf = (file) => JSON.parse(readFileSync(file, 'utf8')).version;

const service = versionOf(join(ROOT, 'package.json'));
const client = versionOf(join(CLIENT, 'package.json'));
if (client !== service) {
  process.stderr.write(
    `client/package.json has version ${client}, the service (package.json) ${service}: give the client the service's version\n`,
  );
  process.exit(1);
}

rmSync(join(CLIENT, 'dist'), { recursive: true, force: true });
for (const { dir, type, flags } of BUILDS) {
  const outDir = join(CLIENT, 'dist', dir);
  const args = ['-p', join(CLIENT, 'tsconfig.package.json'), '--outDir', outDir, ...flags];
  try {
    execFileSync(process.execPath, [TSC, ...args], { stdio: 'inherit' });
  } catch {
    // tsc has printed its errors.
    process.stderr.write(`tsc ${args.join(' ')} failed\n`);
    process.exit(1);
  }
  copyFileSync(join(CLIENT, 'src', 'schema.d.ts'), join(outDir, 'schema.d.ts'));
  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify({ type })}\n`);
}
