// Two projects: unit tests beside the code (the service's and the development database tool's),
// e2e tests through HTTP against a real database (started once per run by
// test/support/global-setup.ts, one database per test file).
const transform = {
  '^.+\\.ts$': [
    'ts-jest',
    {
      tsconfig: 'tsconfig.json',
      // The @nestjs/swagger CLI plugin turns DTO types and JSDoc into OpenAPI schemas at build
      // time; the tests must compile the same way to check the same document.
      astTransformers: { before: ['<rootDir>/test/support/swagger-plugin.js'] },
    },
  ],
  // jose (token verification) is published as ES modules only. Node loads it with require()
  // (>= 20.19), jest's module registry does not: its files are compiled to CommonJS for the tests.
  '^.+/node_modules/jose/.+\\.js$': [
    'ts-jest',
    { tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022' }, isolatedModules: true },
  ],
};
/** Everything in node_modules is loaded as published, except jose (above). */
const transformIgnorePatterns = ['/node_modules/(?!jose/)'];

/** @type {import('jest').Config} */
module.exports = {
  // e2e hooks start apps and, in one file, a second database server.
  testTimeout: 60_000,
  // Two files at a time (npm test: --maxWorkers=2): an e2e file spends much of its time waiting
  // on the database, another process or a timer, which the other worker's file fills. A file's
  // modules and apps stay in its worker's memory after it ends (jest gives each file a registry of
  // its own, and libraries keep references): a worker that holds more than this once a file ends
  // is replaced, so that no heap grows for the whole run and garbage collection stays cheap.
  workerIdleMemoryLimit: '1.5GB',
  projects: [
    {
      displayName: 'unit',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/tools/**/*.spec.ts'],
      testEnvironment: 'node',
      setupFiles: ['reflect-metadata'],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'e2e',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      testEnvironment: 'node',
      setupFiles: ['reflect-metadata'],
      transform,
      transformIgnorePatterns,
      // The typed client's sources (client/src) name their relative imports as its ES-module build
      // must, `./http.js`: here they are the TypeScript files beside them.
      moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
