import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Cluster, NO_CLUSTER, startCluster } from './support/cluster.js';
import { demoTokens, Load } from './support/load.js';
import { NOT_BUILT, type ServeChild, ServeChildren } from './support/serve-child.js';
import { CHAOS, LARGE } from './support/sizes.js';
import { countersign, expectHeld, reportChaos, type Verdict, verify } from './support/verify.js';

// Scenario 1: `countersign serve --demo` SIGKILLed again and again while agents propose and an
// operator approves over HTTP, restarted each time on the same store. Afterwards: no exit the
// test did not cause, no payment made twice, nothing answered 201 or approved 2xx is lost, the
// audit chains verify, every request was answered normally or 503 store_unavailable in time
// (a connection the kill cut is counted apart), and once the last orphaned lease has ended and a
// sweep has run, no proposal is left executing or needing reconciliation and none failed.

const LEASE_MS = 2_000;
const SWEEP_MS = 500;
// "One sweep after the lease end" on an idle machine; this bound only stops a hung test on a
// loaded one (the figure settledMs says how long it took).
const SETTLE_BOUND_MS = 60_000;

function unsettled(verdict: Verdict): number {
  const s = verdict.statuses;
  return (s['executing'] ?? 0) + (s['needs_reconciliation'] ?? 0);
}

const BACKENDS = [
  { backend: 'sqlite', skip: NOT_BUILT },
  { backend: 'postgres', skip: NOT_BUILT ?? NO_CLUSTER },
] as const;

for (const { backend, skip } of BACKENDS) {
  describe.skipIf(skip !== undefined)(`kill loop (${backend})${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it(
      `${CHAOS.kills} SIGKILLs under load: every restart comes up, nothing paid twice or lost, the chain verifies, and everything settles one sweep after the last lease`,
      async () => {
        const children = new ServeChildren();
        const dir = mkdtempSync(join(tmpdir(), `countersign-chaos-kill-${backend}-`));
        let cluster: Cluster | undefined;
        // Passed or failed, the test leaves no process, cluster or file behind (nor for the next backend).
        onTestFinished(async () => {
          await children.stopAll();
          cluster?.dispose();
          rmSync(dir, { recursive: true, force: true });
        });
        if (backend === 'postgres') cluster = await startCluster();
        const location = cluster ? cluster.url : join(dir, 'countersign.db');
        const storeArgs = cluster ? ['--store', location] : ['--db', location];
        // A short lease and sweep, so what a kill orphans is taken over while the test watches.
        const args = [
          '--demo',
          ...storeArgs,
          '--lease',
          `${LEASE_MS}ms`,
          '--sweep-interval',
          `${SWEEP_MS}ms`,
        ];
        const started = Date.now();
        let serve: ServeChild = await children.start(args, dir);
        const tokens = await demoTokens(dir, location, 4);
        const load = new Load(serve.url, { tokens, lanes: CHAOS.lanes, failFast: () => children.crashed() });
        load.start();
        const restartMs: number[] = [];
        try {
          for (let kill = 0; kill < CHAOS.kills; kill++) {
            await load.waitForAnswers(CHAOS.answersPerLife, 60_000);
            // A little jitter: the kill lands anywhere in a request, an execution or a commit.
            await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 40)));
            load.down();
            await serve.kill();
            const restart = Date.now();
            serve = await children.start(args, dir);
            restartMs.push(Date.now() - restart);
            load.up(serve.url);
          }
          await load.waitForAnswers(CHAOS.answersPerLife, 60_000);
        } finally {
          await load.stop();
        }
        // What a kill left executing is taken over by the live server's sweep once its lease ends:
        // re-run, or re-sent under its key (the demo's payments deduplicate). Wait for it, bounded;
        // how long it took is a figure. Then the recover command, as an operator would run it,
        // must be safe beside the live server and find nothing left.
        const journal = join(dir, 'countersign-demo-provider.jsonl');
        const lastKill = Date.now();
        let verdict = await verify(serve.url, tokens, load, journal);
        while (unsettled(verdict) > 0 && Date.now() - lastKill < SETTLE_BOUND_MS) {
          await new Promise((resolve) => setTimeout(resolve, SWEEP_MS));
          verdict = await verify(serve.url, tokens, load, journal);
        }
        const settledMs = Date.now() - lastKill;
        const recover = await countersign(['recover', ...storeArgs, '--json'], dir);
        const audit = await countersign(['audit', 'verify', ...storeArgs], dir);
        const figures = {
          kills: children.kills,
          starts: children.starts,
          unexpectedExits: children.unexpectedExits.length,
          ...load.figures(),
          payments: verdict.payments,
          doublePayments: verdict.doublePayments,
          lost: verdict.lost + verdict.lostApprovals,
          paidButNotRecorded: verdict.paidButNotRecorded,
          slowestRestartMs: Math.max(...restartMs),
          settledMs,
          leftExecuting: verdict.statuses['executing'] ?? 0,
          leftNeedsReconciliation: verdict.statuses['needs_reconciliation'] ?? 0,
          terminalFailures: verdict.statuses['terminal_failure'] ?? 0,
          recover: recover.out.trim() || `exit ${recover.code}`,
          audit: audit.out.trim().split('\n').at(-1) ?? '',
          minutes: ((Date.now() - started) / 60_000).toFixed(1),
        };
        reportChaos({ scenario: 'kill loop', backend, faults: CHAOS.kills, figures });
        const context = expectHeld({ serve, children, load, verdict, audit, extra: { figures } });
        expect(children.kills).toBe(CHAOS.kills);
        // Approved work is finished, not dropped: nothing left mid-way, nothing failed by a kill.
        expect(verdict.statuses['executing'] ?? 0, context).toBe(0);
        expect(verdict.statuses['needs_reconciliation'] ?? 0, context).toBe(0);
        expect(verdict.statuses['terminal_failure'] ?? 0, context).toBe(0);
        expect(load.tally.ok, context).toBeGreaterThan(CHAOS.kills);
        expect(recover.code, `${recover.out}${recover.err}`).toBe(0);
      },
      LARGE ? 40 * 60_000 : 150_000,
    );
  });
}
