// The console's build: console/ → dist/console, served by the service at /console. Asset
// links are relative ('./assets/…'), so the console also works behind a proxy's path prefix.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  // The typed client lives beside the console (../client) and is bundled from its sources.
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
