import { defineConfig } from 'vitest/config';

export default defineConfig({
  // `colloquy-source` makes `import … from 'colloquy'` (bots, examples) resolve to src/ in tests.
  resolve: { conditions: ['colloquy-source'] },
  ssr: { resolve: { conditions: ['colloquy-source'], externalConditions: ['colloquy-source'] } },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // A PostgreSQL server for the run (a throwaway one unless COLLOQUY_TEST_DATABASE_URL names one).
    globalSetup: ['test/support/postgres-server.ts'],
  },
});
