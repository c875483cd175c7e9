import { defineConfig } from 'vitest/config';

/**
 * The coverage floor, per module (`npm run test:coverage` fails below it): whole percents just
 * below what was measured. It only goes up (README, "Test it"). First set from the unit tests
 * (src/, console/src/, packages/toplist-client/) on PostgreSQL, which the whole suite can only exceed.
 */
const COVERAGE_FLOOR = {
  lines: 45,
  statements: 44,
  branches: 35,
  functions: 38,
  'console/src/**': { lines: 100, statements: 96, branches: 88, functions: 100 },
  'packages/adserver-kit/**': { lines: 2, statements: 2, branches: 0, functions: 0 },
  'packages/toplist-client/**': { lines: 97, statements: 94, branches: 93, functions: 96 },
  'src/*.ts': { lines: 58, statements: 55, branches: 45, functions: 51 },
  'src/db/**': { lines: 86, statements: 83, branches: 73, functions: 75 },
  'src/lib/**': { lines: 66, statements: 64, branches: 54, functions: 62 },
  'src/modules/access/**': { lines: 56, statements: 53, branches: 47, functions: 47 },
  'src/modules/adserver/**': { lines: 23, statements: 20, branches: 15, functions: 5 },
  'src/modules/audit/**': { lines: 44, statements: 38, branches: 33, functions: 50 },
  'src/modules/catalog/**': { lines: 57, statements: 54, branches: 45, functions: 53 },
  'src/modules/console/**': { lines: 71, statements: 62, branches: 66, functions: 33 },
  'src/modules/delivery/**': { lines: 84, statements: 81, branches: 73, functions: 72 },
  'src/modules/docs/**': { lines: 46, statements: 45, branches: 31, functions: 34 },
  'src/modules/ops/**': { lines: 60, statements: 54, branches: 31, functions: 50 },
  'src/modules/tracking/**': { lines: 29, statements: 27, branches: 16, functions: 18 },
  'src/modules/webhooks/**': { lines: 39, statements: 36, branches: 11, functions: 26 },
  'src/plugins/**': { lines: 69, statements: 69, branches: 55, functions: 80 },
};

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
    // On with `--coverage` (`npm run test:coverage`, the CI's PostgreSQL pass). Code run by the
    // servers tests spawn is not counted, only what runs in the test processes.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts', 'packages/*/src/**/*.ts'],
      exclude: ['**/*.test.ts'],
      reporter: ['text-summary', 'json-summary'],
      // The floor: just below the figures measured, per module. It only goes up: raise a figure
      // when a change covers more (CONTRIBUTING.md), never lower one to let a change in.
      thresholds: COVERAGE_FLOOR,
    },
  },
});
