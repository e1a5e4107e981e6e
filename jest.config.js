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
};

/** @type {import('jest').Config} */
module.exports = {
  // e2e hooks start apps and, in one file, a second database server.
  testTimeout: 60_000,
  projects: [
    {
      displayName: 'unit',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/tools/**/*.spec.ts'],
      testEnvironment: 'node',
      setupFiles: ['reflect-metadata'],
      transform,
    },
    {
      displayName: 'e2e',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      testEnvironment: 'node',
      setupFiles: ['reflect-metadata'],
      transform,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
