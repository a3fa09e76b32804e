import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FaultPoint } from '../../src/engine/faults.js';
import { createEngine, type Engine, type Store, verifyAudit } from '../../src/index.js';
import {
  PROCESS_BACKENDS,
  type Backend,
  type BackendName,
  createBackend,
  scratchDir,
} from '../support/backends.js';
import { pool, runWorker, runWorkerJson, sleep, startWorker } from './support/children.js';
import {
  draftRows,
  type Made,
  outcomeSteps,
  proposeMany,
  type Stored,
  stored,
  writeTargets,
} from './support/inspect.js';
import { type ProviderJournal, readJournal } from './support/journal.js';
import { reportFigure } from './support/report.js';
import { LARGE, SIZES } from './support/sizes.js';
import {
  type Kind,
  operator,
  reliabilityOperations,
  reliabilityWorld,
  RELIABILITY_LIMITS,
} from './support/world.js';

// Short leases on the real clock: a killed or paused worker's lease ends while the test waits.
const LEASE_MS = 200;
const SPAWN_CONCURRENCY = 3;
const TIMEOUT = LARGE ? 20 * 60_000 : 120_000;

/**
 * What recovery must make of an attempt stopped at a point:
 * - `rerun`: nothing was sent or committed, so the sweep runs it again as attempt 2;
 * - `resent`: the command was recorded (and perhaps sent): the demo's payments declare that their
 *   provider deduplicates by idempotency key, so attempt 2 re-sends it under attempt 1's key and the
 *   proposal ends `succeeded` with exactly one payment (the provider answers a repeated key with its
 *   first payment). Without that declaration it would end `needs_reconciliation`: see
 *   test/engine/recover.integration.test.ts and reconcile-due.integration.test.ts.
 */
type Path = 'rerun' | 'resent';

const POINTS: readonly { readonly point: FaultPoint; readonly external: Path; readonly local?: Path }[] = [
  { point: 'after_claim', external: 'rerun', local: 'rerun' },
  { point: 'after_revalidation', external: 'rerun', local: 'rerun' },
  { point: 'before_provider_call', external: 'resent' },
  { point: 'after_provider_accepted', external: 'resent' },
  // The local effect's transaction is open here and at the next point: the kill rolls it back.
  { point: 'before_outcome_commit', external: 'resent', local: 'rerun' },
  { point: 'between_outcome_and_audit', external: 'resent', local: 'rerun' },
];

// A worker paused inside a transaction holds the write lock (SQLite) or the tenant's audit head
// (PostgreSQL) until it wakes, so no sweep can take over meanwhile: pauses are tested where no
// transaction is open (a local attempt revalidates, runs and commits in one transaction, so only
// its after_claim point is outside one).
const PAUSE_POINTS: readonly {
  readonly point: FaultPoint;
  readonly kind: Kind;
  readonly path: Path;
  readonly note?: string;
}[] = [
  { point: 'after_claim', kind: 'external', path: 'rerun' },
  { point: 'after_revalidation', kind: 'external', path: 'rerun' },
  {
    point: 'before_provider_call',
    kind: 'external',
    path: 'resent',
    note: 'its lease renewal right before the provider call fails, so only the resend calls',
  },
  { point: 'after_provider_accepted', kind: 'external', path: 'resent' },
  { point: 'before_outcome_commit', kind: 'external', path: 'resent' },
  { point: 'after_claim', kind: 'local', path: 'rerun' },
];

interface Lab {
  readonly backend: Backend;
  readonly store: Store;
  readonly engine: Engine;
  readonly dir: string;
  readonly journal: string;
  readonly marker: string;
  readonly args: readonly string[];
  close(): Promise<void>;
}

let lab: Lab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

async function openLab(name: BackendName, invoices: number, leaseMs = LEASE_MS): Promise<Lab> {
  const backend = await createBackend(name);
  const scratch = scratchDir('faults');
  const journal = join(scratch.dir, 'provider.jsonl');
  const marker = join(scratch.dir, 'marker.jsonl');
  const store = await backend.open();
  const world = reliabilityWorld({ invoices, journal });
  const engine = await createEngine({
    store,
    operations: reliabilityOperations(world),
    leaseMs,
    limits: RELIABILITY_LIMITS,
  });
  const args = [
    '--store',
    backend.location,
    '--journal',
    journal,
    '--invoices',
    String(invoices),
    '--lease-ms',
    String(leaseMs),
  ];
  return {
    backend,
    store,
    engine,
    dir: scratch.dir,
    journal,
    marker,
    args,
    close: async () => {
      await engine.close();
      await backend.dispose();
      scratch.remove();
    },
  };
}

interface RecoveryOutput {
  readonly recovery: {
    examined: number;
    rerun: number;
    resent: number;
    toReconciliation: number;
    parked: number;
    skipped: number;
  };
  readonly reconciled: Record<string, number>;
}

/**
 * A sweep in another process, then a second one that must find nothing (repeated sweeps do nothing
 * twice). Concurrent sweeps have their own test below.
 */
async function recoverThenAgain(l: Lab): Promise<{ first: RecoveryOutput; again: RecoveryOutput }> {
  const first = await runWorkerJson<RecoveryOutput>('recover', l.args);
  const again = await runWorkerJson<RecoveryOutput>('recover', l.args);
  return { first, again };
}

/** Every way one proposal could have gone wrong; empty when it held. */
function violations(
  s: Stored,
  made: Made,
  path: Path,
  journal: ProviderJournal,
  drafts: ReadonlyMap<string, number>,
): string[] {
  const out: string[] = [];
  const { record, attempts, events } = s;
  const say = (what: string) => out.push(`${made.kind} ${made.id} (${path}): ${what}`);
  const calls = journal.calls.get(made.id) ?? 0;
  const payments = journal.payments.get(made.id)?.length ?? 0;
  const effects = made.kind === 'external' ? payments : (drafts.get(made.id) ?? 0);

  // A resend repeats a call under the same key (the provider answers it with its first payment):
  // two calls, never two payments.
  if (calls > (path === 'resent' ? 2 : 1)) say(`duplicate provider call: ${calls} calls`);
  if (effects > 1) say(`duplicate effect: ${effects}`);
  if (!['succeeded', 'terminal_failure'].includes(record.status)) say(`lost: left ${record.status}`);
  if ((record.status === 'succeeded') !== (effects === 1))
    say(
      `the outcome ${record.status} disagrees with the effect (${effects} effects, ${calls} provider calls)`,
    );

  const steps = events.map((e) => e.step);
  for (const step of ['proposed', 'approved', 'claimed', 'outcome'] as const)
    if (!steps.includes(step)) say(`audit lacks ${step}`);
  for (const attempt of attempts) {
    if (!events.some((e) => e.step === 'claimed' && e.attemptId === attempt.id))
      say(`audit lacks the claim of attempt ${attempt.number}`);
  }
  if (attempts.some((a) => a.status === 'executing')) say('an attempt is still executing');
  const outcomes = outcomeSteps(events);
  if (outcomes.at(-1) !== record.status)
    say(`the last audited outcome ${outcomes.at(-1)} is not the stored ${record.status}`);

  if (path === 'rerun') {
    if (record.status !== 'succeeded') say(`expected succeeded after a re-run, got ${record.status}`);
    if (attempts.length !== 2 || attempts[0]?.status !== 'abandoned')
      say(`expected attempt 1 abandoned and attempt 2, got ${attempts.map((a) => a.status).join(',')}`);
    if (made.kind === 'external' && journal.payments.get(made.id)?.[0] !== `${made.id}.2`)
      say('the re-run did not pay under attempt 2');
    if (outcomes.join(',') !== 'succeeded') say(`audited outcomes ${outcomes.join(',')}`);
  } else {
    if (record.status !== 'succeeded') say(`expected succeeded after a resend, got ${record.status}`);
    if (attempts.length !== 2 || attempts[0]?.status !== 'abandoned')
      say(`expected attempt 1 abandoned and attempt 2, got ${attempts.map((a) => a.status).join(',')}`);
    if (attempts[1]?.commandId !== attempts[0]?.commandId) say("attempt 2 did not carry attempt 1's command");
    if (journal.payments.get(made.id)?.join(',') !== `${made.id}.1`)
      say(`expected one payment under attempt 1's key, got ${journal.payments.get(made.id)?.join(',')}`);
    if (outcomes.join(',') !== 'succeeded') say(`audited outcomes ${outcomes.join(',')}`);
  }
  return out;
}

interface Checked {
  readonly problems: string[];
  /** Proposals with any problem. */
  readonly bad: Set<string>;
  readonly duplicates: number;
  /** Proposals left in a non-final state (or missing). */
  readonly lost: number;
  /** Proposals whose stored outcome disagrees with the provider or the local effect. */
  readonly wrong: number;
}

async function checkAll(l: Lab, made: readonly Made[], pathOf: (m: Made) => Path): Promise<Checked> {
  const journal = readJournal(l.journal);
  const sql = await l.backend.sql();
  const drafts = await draftRows(sql);
  await sql.close();
  const problems: string[] = [];
  const bad = new Set<string>();
  let duplicates = 0;
  let lost = 0;
  let wrong = 0;
  for (const m of made) {
    const found = await stored(l.store, m.id);
    const v = violations(found, m, pathOf(m), journal, drafts);
    problems.push(...v);
    if (v.length > 0) bad.add(m.id);
    if (v.some((p) => p.includes('duplicate'))) duplicates++;
    if (v.some((p) => p.includes('lost'))) lost++;
    if (v.some((p) => p.includes('disagrees'))) wrong++;
  }
  const audit = await verifyAudit(l.store);
  if (audit.kind !== 'intact') problems.push(`audit broken: ${audit.message}`);
  return { problems, bad, duplicates, lost, wrong };
}

function kindsFor(entry: (typeof POINTS)[number], count: number): Kind[] {
  return Array.from({ length: count }, (_, i) => (entry.local && i % 2 === 1 ? 'local' : 'external'));
}

for (const { name, skip } of PROCESS_BACKENDS) {
  describe.skipIf(skip !== undefined)(
    `fault injection on ${name}${skip ? ` (skipped: ${skip})` : ''}`,
    () => {
      for (const entry of POINTS) {
        it(
          `SIGKILL at ${entry.point}: no duplicate provider call, nothing lost, audit complete after recovery`,
          async () => {
            const kinds = kindsFor(entry, SIZES.killsPerPoint);
            lab = await openLab(name, kinds.length);
            const l = lab;
            const made = await proposeMany(l.engine, kinds, `run-kill-${entry.point}`);
            const exits = await pool(
              SPAWN_CONCURRENCY,
              made.map(
                (m, i) => () =>
                  runWorker('execute', [
                    ...l.args,
                    '--proposals',
                    writeTargets(join(l.dir, `targets-${i}.json`), [m]),
                    '--fault',
                    'kill',
                    '--at',
                    entry.point,
                    '--marker',
                    l.marker,
                  ]),
              ),
            );
            // Every worker died by SIGKILL at the point, before it could say anything else.
            expect(exits.map((e) => e.signal)).toEqual(made.map(() => 'SIGKILL'));
            const marks = readMarks(l.marker);
            expect(made.map((m) => marks.get(m.id))).toEqual(made.map(() => entry.point));

            await sleep(LEASE_MS + 100);
            const { first, again } = await recoverThenAgain(l);
            const reruns = made.filter(
              (m) => (m.kind === 'local' ? entry.local : entry.external) === 'rerun',
            ).length;
            expect(first.recovery.rerun).toBe(reruns);
            expect(first.recovery.resent).toBe(made.length - reruns);
            expect(first.recovery.toReconciliation).toBe(0);
            expect(first.recovery.parked).toBe(0);
            expect(again.recovery.examined).toBe(0);
            expect(again.reconciled).toEqual({});

            const { problems, bad, duplicates, lost, wrong } = await checkAll(l, made, (m) =>
              m.kind === 'local' ? entry.local! : entry.external,
            );
            reportFigure({
              suite: 'faults',
              what: `SIGKILL ${entry.point}`,
              backend: name,
              tried: made.length,
              held: made.length - bad.size,
              detail: {
                external: kinds.filter((k) => k === 'external').length,
                local: kinds.filter((k) => k === 'local').length,
                duplicates,
                lost,
                wrongOutcomes: wrong,
              },
            });
            expect(problems).toEqual([]);
          },
          TIMEOUT,
        );
      }

      it(
        'four recovery sweeps in four processes at once take every expired attempt over exactly once, and none fails (a lost compare-and-set is a skip)',
        async () => {
          const count = LARGE ? 200 : 40;
          // The re-runs wait for one another's write lock: give each new attempt a lease they can finish in.
          const leaseMs = 3_000;
          lab = await openLab(name, count, leaseMs);
          const l = lab;
          const made = await proposeMany(
            l.engine,
            Array.from({ length: count }, () => 'local'),
            'run-sweeps',
          );
          // Claimed and never executed: as if every worker died right after its claim.
          for (const m of made)
            expect(
              (
                await l.engine.proposals.approve({
                  tenant: 'acme',
                  proposalId: m.id,
                  approver: operator('ada'),
                  seenDigest: m.digest,
                })
              ).kind,
            ).toBe('claimed');
          await sleep(leaseMs + 100);
          const exits = await Promise.all(Array.from({ length: 4 }, () => runWorker('recover', l.args)));
          const failed = exits
            .filter((e) => e.code !== 0)
            .map(
              (e) => e.stderr.split('\n').find((line) => line.includes('Error')) ?? e.stderr.slice(0, 300),
            );
          const reruns = exits
            .filter((e) => e.code === 0)
            .reduce((n, e) => n + (JSON.parse(e.stdout.trim()) as RecoveryOutput).recovery.rerun, 0);
          // Whatever a failed sweep left, a later one finishes; nothing may have run twice.
          await runWorkerJson<RecoveryOutput>('recover', l.args);
          const { problems, bad } = await checkAll(l, made, () => 'rerun');
          reportFigure({
            suite: 'faults',
            what: `4 concurrent recovery sweeps over ${count} expired attempts (sweeps that finished)`,
            backend: name,
            tried: 4,
            held: 4 - failed.length,
            detail: { reruns, proposalsWrong: bad.size },
          });
          expect(problems).toEqual([]);
          expect(failed).toEqual([]);
          expect(reruns).toBe(count);
        },
        TIMEOUT,
      );

      it(
        'a sweep by an engine that lacks the operation does not close a paid external attempt as "nothing was sent": it leaves it alone',
        async () => {
          lab = await openLab(name, 1);
          const l = lab;
          const [m] = await proposeMany(l.engine, ['external'], 'run-unknown-operation');
          const exit = await runWorker('execute', [
            ...l.args,
            '--proposals',
            writeTargets(join(l.dir, 'targets.json'), [m!]),
            '--fault',
            'kill',
            '--at',
            'after_provider_accepted',
            '--marker',
            l.marker,
          ]);
          expect(exit.signal).toBe('SIGKILL');
          expect(readJournal(l.journal).payments.get(m!.id)).toHaveLength(1);
          await sleep(LEASE_MS + 100);
          // A process that only runs the local draft operation sweeps the shared store.
          const partial = await createEngine({
            limits: RELIABILITY_LIMITS,
            store: l.store,
            operations: reliabilityOperations(reliabilityWorld({ invoices: 1 })).filter(
              (o) => o.kind === 'email_broadcast.apply_draft',
            ),
            leaseMs: LEASE_MS,
            migrate: false,
          });
          await partial.sweeps.recover();
          const after = (await stored(l.store, m!.id)).record;
          reportFigure({
            suite: 'faults',
            what: 'sweep without the operation registered',
            backend: name,
            tried: 1,
            held: after.status === 'terminal_failure' ? 0 : 1,
          });
          // The provider holds the payment: whatever the partial sweep does, it must not record that nothing happened.
          expect(after.status).not.toBe('terminal_failure');
        },
        TIMEOUT,
      );

      for (const entry of PAUSE_POINTS) {
        it(
          `SIGSTOP at ${entry.point} (${entry.kind}) past the lease, SIGCONT after another process took over: the woken worker commits nothing${entry.note ? ` — ${entry.note}` : ''}`,
          async () => {
            const kinds = Array.from({ length: SIZES.pausesPerPoint }, () => entry.kind);
            lab = await openLab(name, kinds.length);
            const l = lab;
            const made = await proposeMany(l.engine, kinds, `run-pause-${entry.point}`);
            const woken: string[] = [];
            for (const [i, m] of made.entries()) {
              const worker = startWorker('execute', [
                ...l.args,
                '--proposals',
                writeTargets(join(l.dir, `targets-${i}.json`), [m]),
                '--fault',
                'stop',
                '--at',
                entry.point,
                '--marker',
                l.marker,
              ]);
              await worker.stopped();
              await sleep(LEASE_MS + 100);
              await runWorkerJson<RecoveryOutput>('recover', l.args);
              worker.signal('SIGCONT');
              const exit = await worker.exited;
              expect(exit.code, exit.stderr).toBe(0);
              const printed = JSON.parse(exit.stdout.trim()) as { results: { outcome?: string }[] };
              woken.push(printed.results[0]?.outcome ?? 'none');
            }
            const { problems, bad, duplicates, lost, wrong } = await checkAll(l, made, () => entry.path);
            const finals = await Promise.all(
              made.map(async (m) => (await stored(l.store, m.id)).record.status),
            );
            // The woken worker was fenced: it returned the stored outcome, it did not make one.
            for (const [i, outcome] of woken.entries()) {
              if (outcome === finals[i]) continue;
              problems.push(
                `${made[i]!.id}: the woken worker reported ${outcome}, the store holds ${finals[i]}`,
              );
              bad.add(made[i]!.id);
            }
            reportFigure({
              suite: 'faults',
              what: `SIGSTOP ${entry.point} (${entry.kind})`,
              backend: name,
              tried: made.length,
              held: made.length - bad.size,
              detail: { duplicates, lost, wrongOutcomes: wrong },
            });
            expect(problems).toEqual([]);
          },
          TIMEOUT,
        );
      }
    },
  );
}

function readMarks(path: string): Map<string, string> {
  const marks = new Map<string, string>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    const mark = JSON.parse(line) as { point: string; proposalId: string };
    marks.set(mark.proposalId, mark.point);
  }
  return marks;
}
