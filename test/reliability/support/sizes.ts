/**
 * How big the reliability suites run. CI runs the small versions; `npm run reliability` sets
 * `COUNTERSIGN_RELIABILITY=large` and runs the sizes RELIABILITY.md reports.
 */
export const LARGE = process.env['COUNTERSIGN_RELIABILITY'] === 'large';

// Every row of the 1,000-event log through every change takes about half an hour on two cores and
// two backends; `COUNTERSIGN_TAMPER_ROWS=all` (or a number) asks for it.
const tamperRows = process.env['COUNTERSIGN_TAMPER_ROWS'];
const TAMPER_ROWS =
  tamperRows === 'all' ? Number.POSITIVE_INFINITY : tamperRows ? Number(tamperRows) : undefined;

/** Every size the suites use, small (CI) or large (`npm run reliability`). */
export const SIZES = Object.freeze(
  LARGE
    ? {
        /** SIGKILLs per fault point and backend: 6 points × 50 × 2 backends = 600. */
        killsPerPoint: 50,
        /** SIGSTOP/SIGCONT pauses per (operation, point) and backend. */
        pausesPerPoint: 3,
        /** Proposals every client of the race suite approves (or declines, or edits). */
        raceProposals: 1_000,
        raceProcesses: 8,
        raceClients: 4,
        /** Issue 3: OS processes on one SQLite file approving the same proposals. */
        sqliteRaceProcesses: 4,
        sqliteRaceProposals: 1_000,
        /** Generated payloads per target of the bad-input suite. */
        parsePayloads: 100_000,
        proposePayloads: 100_000,
        httpPayloads: 20_000,
        /** Audit rows (first, last, evenly spaced) whose every column is changed, deleted, swapped, and before which a row is inserted. */
        tamperRows: TAMPER_ROWS ?? 250,
        cliSamples: 12,
      }
    : {
        killsPerPoint: 2,
        pausesPerPoint: 1,
        raceProposals: 120,
        raceProcesses: 4,
        raceClients: 2,
        sqliteRaceProcesses: 4,
        sqliteRaceProposals: 1_000,
        parsePayloads: 12_000,
        proposePayloads: 10_000,
        httpPayloads: 1_000,
        tamperRows: TAMPER_ROWS ?? 16,
        cliSamples: 4,
      },
);
