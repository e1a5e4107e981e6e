// The console's build: console/ → dist/console, served by the service at /console. Asset
// links are relative ('./assets/…'), so the console also works behind a proxy's path prefix.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
const clientDir = new URL('../client/', import.meta.url);
const client = JSON.parse(readFileSync(new URL('package.json', clientDir), 'utf8'));
const importEntry = client.exports['.'].import.default;

export default defineConfig({
  root: here,
  base: './',
  // The typed client is imported by its package name and resolved as an installed package is:
  // through its package.json `exports`, the ES-module build an `import` gets (../client/dist/esm,
  // made by `npm run client:build`). No workspace or `file:` dependency: either would add the
  // package to the lockfile.
  resolve: { alias: { [client.name]: fileURLToPath(new URL(importEntry, clientDir)) } },
  server: { fs: { allow: [fileURLToPath(new URL('..', import.meta.url))] } },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or data: modules: the service's Content-Security-Policy allows 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: true,
  },
});
