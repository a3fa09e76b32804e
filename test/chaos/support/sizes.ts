/**
 * How big the chaos suite runs. CI (`npm test`) runs the small version in about two minutes;
 * `npm run chaos` sets `COUNTERSIGN_CHAOS=large` and runs the sizes RELIABILITY.md reports.
 */
export const LARGE = process.env['COUNTERSIGN_CHAOS'] === 'large';

/** Every size the chaos scenarios use. */
export const CHAOS = Object.freeze(
  LARGE
    ? {
        /** SIGKILLs of `countersign serve` per backend, each followed by a restart on the same store. */
        kills: 100,
        /** Answers (any class) the load gets from a serve before it is killed. */
        answersPerLife: 20,
        /** PostgreSQL restarts per stop mode (fast, immediate). */
        restartsPerMode: 5,
        /** Rounds of pg_terminate_backend over the server's connections. */
        terminations: 20,
        /** SIGSTOP/SIGCONT pauses of the whole PostgreSQL cluster, and how long each lasts. */
        pauses: 3,
        pauseMs: 20_000,
        /** Full-disk episodes on the 8 MiB tmpfs. */
        diskFulls: 3,
        /** Webhook receiver outages (refusing, then 500s). */
        webhookOutages: 3,
        /** Concurrent client loops. */
        lanes: 6,
      }
    : {
        kills: 5,
        answersPerLife: 20,
        restartsPerMode: 1,
        terminations: 3,
        pauses: 1,
        pauseMs: 3_000,
        diskFulls: 1,
        webhookOutages: 1,
        lanes: 4,
      },
);

/** The server's request deadline (src/server/request-deadline.ts) plus a margin for a loaded machine. */
export const ANSWER_WITHIN_MS = 15_000 + 5_000;
