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
    projects: [
      { test: { ...shared, name: 'postgres', env: { TEST_DB: 'postgres' } } },
      { test: { ...shared, name: 'pglite', env: { TEST_DB: 'pglite' } } },
    ],
  },
});
