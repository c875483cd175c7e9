import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'src/**/*.test.ts',
      'console/src/**/*.test.ts',
      'test/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
    ],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 300_000,
    // Two cores: PGlite boots a WASM Postgres per file, so keep the number of files in flight small.
    maxWorkers: 2,
    pool: 'forks',
  },
});
