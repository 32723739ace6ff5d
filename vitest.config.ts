import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The same suite runs twice: against a real PostgreSQL server over TCP and against the embedded
// PGlite. Tests that need several processes on one database skip themselves on PGlite (it is
// single-process by design); see test/support/helpers.ts `onPostgresOnly`.
const shared = {
  include: ['test/**/*.test.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core machine, where
    // most test files spend their time waiting on PostgreSQL, a service process or a browser. Two
    // files at a time keep both cores busy; TEST_WORKERS overrides it (1 to run the files one by one).
    maxWorkers: Number(process.env.TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
    projects: [
      { test: { ...shared, name: 'postgres', env: { TEST_DB: 'postgres' } } },
      { test: { ...shared, name: 'pglite', env: { TEST_DB: 'pglite' } } },
    ],
  },
});
