import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, NO_CLUSTER, startCluster } from './support/cluster.js';
import { demoTokens, Load, type Tokens } from './support/load.js';
import { readyz, waitForReadyz } from './support/probes.js';
import { NOT_BUILT, type ServeChild, ServeChildren } from './support/serve-child.js';
import { CHAOS, LARGE } from './support/sizes.js';
import { countersign, expectHeld, reportChaos, verify } from './support/verify.js';

// Scenario 2: one `countersign serve --demo` on a throwaway PostgreSQL cluster, under load, while
// the cluster is stopped and started again (fast, and immediate: a crash), its backends are
// terminated, and the whole cluster is SIGSTOPped for a while. During each fault every request is
// answered normally or 503 store_unavailable within the deadline, /readyz says 503; afterwards
// /readyz is 200, the server serves again, and nothing was lost or paid twice.
const skip = NOT_BUILT ?? NO_CLUSTER;
const children = new ServeChildren();
let cluster: Cluster | undefined;
let dir: string | undefined;
let serve: ServeChild;
let load: Load;
let tokens: Tokens;
const faults = {
  restarts: 0,
  terminations: 0,
  terminatedBackends: 0,
  pauses: 0,
  readyz503: 0,
  slowestReadyzMs: 0,
};
const RECOVER_MS = 60_000;

beforeAll(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'countersign-chaos-pg-'));
  cluster = await startCluster();
  serve = await children.start(['--demo', '--store', cluster.url], dir);
  tokens = await demoTokens(dir, cluster.url, 4);
  load = new Load(serve.url, { tokens, lanes: CHAOS.lanes, failFast: () => children.crashed() });
  load.start();
  await load.waitForAnswers(10, 60_000, ['ok']);
}, 120_000);

afterAll(async () => {
  await load?.stop();
  await children.stopAll();
  cluster?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The server serves writes again: `count` more 2xx answers. */
async function servesAgain(count = 5): Promise<void> {
  await load.waitForAnswers(count, RECOVER_MS, ['ok']);
}

async function notReadyDuring(): Promise<void> {
  const probe = await waitForReadyz(serve.url, 503, 30_000);
  faults.readyz503++;
  faults.slowestReadyzMs = Math.max(faults.slowestReadyzMs, probe.ms);
}

describe.skipIf(skip !== undefined)(
  `PostgreSQL faults under load${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    for (const mode of ['fast', 'immediate'] as const) {
      it(
        `a restart (pg_ctl stop -m ${mode}, then start) × ${CHAOS.restartsPerMode}: /readyz 503 while down, 200 after, writes resume`,
        async () => {
          for (let i = 0; i < CHAOS.restartsPerMode; i++) {
            cluster!.stop(mode);
            faults.restarts++;
            await notReadyDuring();
            // Requests keep coming while it is down: some are answered 503 store_unavailable.
            await load.waitForAnswers(3, RECOVER_MS, ['store_unavailable']);
            cluster!.start();
            await waitForReadyz(serve.url, 200, RECOVER_MS);
            await servesAgain();
          }
        },
        LARGE ? 20 * 60_000 : 120_000,
      );
    }

    it(
      `pg_terminate_backend on every connection of the server × ${CHAOS.terminations}: writes resume`,
      async () => {
        for (let i = 0; i < CHAOS.terminations; i++) {
          // The load keeps a few connections busy; wait until it has some to end.
          await servesAgain(3);
          faults.terminatedBackends += await cluster!.terminate();
          faults.terminations++;
          await servesAgain();
        }
        expect(faults.terminatedBackends).toBeGreaterThan(0);
        expect((await readyz(serve.url)).status).toBe(200);
      },
      LARGE ? 20 * 60_000 : 120_000,
    );

    it(
      `the cluster SIGSTOPped for ${CHAOS.pauseMs / 1000} s × ${CHAOS.pauses}: answers within the deadline, /readyz 503 during, 200 after`,
      async () => {
        for (let i = 0; i < CHAOS.pauses; i++) {
          await servesAgain(3);
          const before = load.tally.store_unavailable;
          const resumeAt = Date.now() + CHAOS.pauseMs;
          cluster!.pause();
          faults.pauses++;
          try {
            // readiness gives the store 2 s: a paused database is 503 while still paused.
            await notReadyDuring();
            // The pause is the fault: its length is what is being tested, not an assertion's wait.
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, resumeAt - Date.now())));
          } finally {
            cluster!.resume();
          }
          await waitForReadyz(serve.url, 200, RECOVER_MS);
          await servesAgain();
          // A pause longer than the connect timeout (5 s) surfaces as 503s; a short one as slow answers.
          if (CHAOS.pauseMs > 6_000) expect(load.tally.store_unavailable).toBeGreaterThan(before);
        }
      },
      LARGE ? 20 * 60_000 : 120_000,
    );

    it('afterwards: the same process serves, nothing lost or paid twice, every answer normal or 503 in time, the chain verifies', async () => {
      await load.stop();
      const verdict = await verify(serve.url, tokens, load, join(dir!, 'countersign-demo-provider.jsonl'));
      const audit = await countersign(['audit', 'verify', '--store', cluster!.url], dir!);
      const figures = {
        ...faults,
        unexpectedExits: children.unexpectedExits.length,
        ...load.figures(),
        payments: verdict.payments,
        doublePayments: verdict.doublePayments,
        lost: verdict.lost + verdict.lostApprovals,
        paidButNotRecorded: verdict.paidButNotRecorded,
        audit: audit.out.trim().split('\n').at(-1) ?? '',
      };
      reportChaos({
        scenario: 'postgres faults',
        backend: 'postgres',
        faults: faults.restarts + faults.terminations + faults.pauses,
        figures,
      });
      expectHeld({ serve, children, load, verdict, audit, extra: { figures } });
      expect(children.starts, 'one process through every fault').toBe(1);
    }, 120_000);
  },
);
