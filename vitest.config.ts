import { defineConfig } from 'vitest/config';

// The `integration` project: what boots the service (`countersign serve`, in-process or as a
// child process), drives a browser, opens PostgreSQL (a server, or embedded PGlite when none is
// set), waits on real timers, or mocks a module (the unit project shares modules between files).
// Everything else is the `unit` project, the quick loop of `npm run test:unit`. `npm test` runs both.
const INTEGRATION = [
  // Child processes and Chromium.
  'test/browser/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/reliability/**/*.test.ts',
  'test/store/upgrade.test.ts',
  'test/adapters/examples.test.ts',
  'test/adapters/mcp.test.ts',
  'test/adapters/mcp-replies.test.ts',
  'test/adapters/mcp-red-team.test.ts',
  'test/notify/kill-delivery.test.ts',
  'test/server/start-server.test.ts',
  'test/server/store-unavailable.test.ts',
  // Raw sockets sending what no HTTP client would, and a server-side timeout on real timers.
  'test/server/client-error.test.ts',
  // `countersign serve` in-process: the whole service boots, seeds and hashes at production cost.
  'test/notify/serve-notifications.test.ts',
  'test/server/serve-command.test.ts',
  'test/server/serve-oidc.test.ts',
  'test/store/file-modes.test.ts',
  // PostgreSQL or PGlite beside SQLite.
  'test/store/postgres-store.test.ts',
  'test/store/postgres-faults.test.ts',
  'test/store/audit-batching.test.ts',
  'test/store/pglite-store.test.ts',
  'test/engine/read.test.ts',
  'test/engine/store-fault-execution.test.ts',
  // 60 random histories per backend, each on a freshly migrated store (a schema each on PostgreSQL).
  'test/engine/model.test.ts',
  // Fourteen engines per backend, each on a freshly migrated store.
  'test/engine/execution.test.ts',
  'test/notify/live-feed.test.ts',
  'test/notify/outbox.test.ts',
  'test/notify/outbox-retention.test.ts',
  'test/server/audit-trust.test.ts',
  'test/server/live-events.test.ts',
  'test/server/principal-directory.test.ts',
  // Holes found from outside, over SQLite and PostgreSQL (text PostgreSQL cannot hold).
  'test/server/red-team.test.ts',
  // Retries on real timers of tens of milliseconds: load on the machine changes what they see.
  'test/notify/webhook-delivery.test.ts',
  // vi.mock over the server's modules, and 400 concurrent sign-ins at production cost.
  'test/server/login-limiting.test.ts',
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
    // The pool reads this from the root: only the unit project runs on threads, integration
    // keeps a fresh process per file (the default forks pool).
    poolOptions: { threads: { isolate: false } },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...INTEGRATION, 'test/chaos/**'],
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
          // Threads that run file after file in one module graph (poolOptions above) instead of a
          // process per file importing the engine, Hono and zod afresh. Safe because no unit
          // file mocks a module or leaves global state behind (what does is in integration).
          pool: 'threads',
          isolate: false,
        },
      },
      { extends: true, test: { name: 'integration', include: INTEGRATION } },
      // Real `countersign serve` processes (the built dist/) killed, or starved of their database,
      // disk or webhook receiver, under HTTP load. After the other projects (groupOrder): a fault
      // timed against a busy neighbour measures the neighbour. `npm run chaos` runs it large.
      {
        extends: true,
        test: { name: 'chaos', include: ['test/chaos/**/*.test.ts'], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
