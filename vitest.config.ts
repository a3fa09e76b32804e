import { defineConfig } from 'vitest/config';

// What runs other processes, a browser, or a PostgreSQL-only suite: its own project, so that
// `npm run test:unit` is a quick loop. `npm test` runs both.
const INTEGRATION = [
  'test/browser/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/reliability/**/*.test.ts',
  'test/store/postgres-store.test.ts',
  'test/store/upgrade.test.ts',
  'test/adapters/examples.test.ts',
  'test/adapters/mcp.test.ts',
  'test/adapters/mcp-replies.test.ts',
  'test/notify/kill-delivery.test.ts',
  'test/server/start-server.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Stray console output hides the one line that matters: fail the run on it.
    onConsoleLog: (log) => {
      throw new Error(`unexpected console output in a test: ${log.slice(0, 200)}`);
    },
    passWithNoTests: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: INTEGRATION,
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
        },
      },
      { extends: true, test: { name: 'integration', include: INTEGRATION } },
    ],
  },
});
