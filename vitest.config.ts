import { defineConfig } from 'vitest/config';

// Where a test file belongs is in its name. A file that boots the service (`countersign serve`,
// in-process or as a child process), starts any other process, drives a browser, opens PostgreSQL
// (a server, or embedded PGlite when none is set), waits on real timers, or mocks a module (the
// unit project shares modules between files) is named `*.integration.test.ts`: the `integration`
// project, a fresh process per file. Every other `test/**/*.test.ts` outside test/chaos/ is the
// `unit` project, the quick loop of `npm run test:unit`. `npm test` runs both (and chaos).
const INTEGRATION = ['test/**/*.integration.test.ts'];
const CHAOS = ['test/chaos/**'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll's own 1 s default is a wall-clock guess: CI failed on a browser tab whose closed
    // stream the server noticed a little later than that on a loaded machine.
    expect: { poll: { timeout: 15_000 } },
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
          exclude: [...INTEGRATION, ...CHAOS],
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
          // Threads that run file after file in one module graph (poolOptions above) instead of a
          // process per file importing the engine, Hono and zod afresh. Safe because no unit
          // file mocks a module or leaves global state behind (what does is in integration).
          pool: 'threads',
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: INTEGRATION,
          exclude: CHAOS,
          // Limits that hold when the machine is busy: these boot servers, browsers and embedded
          // PostgreSQL, which a parallel build can slow several times over. A hang still ends.
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
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
