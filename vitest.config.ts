import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Stray console output hides the one line that matters: fail the run on it.
    onConsoleLog: (log) => {
      throw new Error(`unexpected console output in a test: ${log.slice(0, 200)}`);
    },
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
    passWithNoTests: false,
  },
});
