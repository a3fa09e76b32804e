import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type Store, verifyAudit } from '../../src/index.js';
import type { ClientResult } from '../support/worker.js';
import {
  PROCESS_BACKENDS,
  type Backend,
  type BackendName,
  createBackend,
  type RawSql,
  scratchDir,
} from '../support/backends.js';
import { runWorkerJson } from './support/children.js';
import { draftRows, type Made, proposeMany, stored } from './support/inspect.js';
import { readJournal } from './support/journal.js';
import { reportFigure } from './support/report.js';
import { LARGE, SIZES } from './support/sizes.js';
import { type Kind, reliabilityOperations, reliabilityWorld, RELIABILITY_LIMITS } from './support/world.js';

const TIMEOUT = LARGE ? 30 * 60_000 : 240_000;

type Race = 'approve' | 'decline' | 'edit';

interface Planned extends Made {
  readonly race: Race;
}

interface Lab {
  readonly backend: Backend;
  readonly store: Store;
  readonly engine: Engine;
  readonly dir: string;
  readonly journal: string;
  readonly args: readonly string[];
  close(): Promise<void>;
}

let lab: Lab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

async function openLab(name: BackendName, invoices: number): Promise<Lab> {
  const backend = await createBackend(name);
  const scratch = scratchDir('races');
  const journal = join(scratch.dir, 'provider.jsonl');
  const store = await backend.open();
  const engine = await createEngine({
    limits: RELIABILITY_LIMITS,
    store,
    operations: reliabilityOperations(reliabilityWorld({ invoices, journal })),
  });
  return {
    backend,
    store,
    engine,
    dir: scratch.dir,
    journal,
    args: ['--store', backend.location, '--journal', journal, '--invoices', String(invoices)],
    close: async () => {
      await engine.close();
      await backend.dispose();
      scratch.remove();
    },
  };
}

/**
 * The proposals of a mixed race: 60% only approved (three in four external payments, the rest local
 * drafts), 20% approve racing decline (payments), 20% approve racing edit (drafts: the editable operation).
 */
function mix(count: number): { kinds: Kind[]; races: Race[] } {
  const kinds: Kind[] = [];
  const races: Race[] = [];
  for (let i = 0; i < count; i++) {
    const slot = i % 10;
    const race: Race = slot < 6 ? 'approve' : slot < 8 ? 'decline' : 'edit';
    races.push(race);
    kinds.push(race === 'edit' || (race === 'approve' && slot % 4 === 3) ? 'local' : 'external');
  }
  return { kinds, races };
}

/** Starts `processes` workers of `clients` clients each over one plan, all at once; returns every client's results. */
async function race(
  l: Lab,
  plan: readonly Planned[],
  processes: number,
  clients: number,
): Promise<{ results: ClientResult[]; ms: number }> {
  const planFile = join(l.dir, 'plan.json');
  writeFileSync(planFile, JSON.stringify(plan.map(({ id, digest, race: r }) => ({ id, digest, race: r }))));
  const startAt = Date.now() + 2_500 + processes * 300;
  const outputs = await Promise.all(
    Array.from({ length: processes }, (_, p) =>
      runWorkerJson<{ ms: number }>('race', [
        ...l.args,
        '--plan',
        planFile,
        '--clients',
        String(clients),
        '--process',
        String(p),
        '--start-at',
        String(startAt),
        '--out',
        join(l.dir, `out-${p}.json`),
      ]),
    ),
  );
  const results = Array.from(
    { length: processes },
    (_, p) => JSON.parse(readFileSync(join(l.dir, `out-${p}.json`), 'utf8')) as ClientResult[],
  ).flat();
  return { results, ms: Math.max(...outputs.map((o) => o.ms)) };
}

async function supersedingCounts(sql: RawSql): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const row of await sql.all(
    'SELECT supersedes, COUNT(*) AS n FROM countersign_proposals WHERE supersedes IS NOT NULL GROUP BY supersedes',
  )) {
    counts.set(String(row['supersedes']), Number(row['n']));
  }
  return counts;
}

interface Verdict {
  readonly problems: string[];
  readonly executions: number;
  readonly doubleExecutions: number;
  readonly lostDecisions: number;
}

/** Checks every proposal of a race: one winner, its decision stored, at most one execution. */
async function judge(
  l: Lab,
  plan: readonly Planned[],
  results: readonly ClientResult[],
  journalFile = l.journal,
): Promise<Verdict> {
  const journal = readJournal(journalFile);
  const sql = await l.backend.sql();
  const drafts = await draftRows(sql);
  const superseding = await supersedingCounts(sql);
  await sql.close();
  const byId = new Map<string, ClientResult[]>();
  for (const r of results) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
  const problems: string[] = [];
  let executions = 0;
  let doubleExecutions = 0;
  let lostDecisions = 0;
  for (const p of plan) {
    const say = (what: string) => problems.push(`${p.race} ${p.kind} ${p.id}: ${what}`);
    const mine = byId.get(p.id) ?? [];
    const errors = mine.filter((r) => r.kind === 'error');
    if (errors.length > 0) say(`${errors.length} clients got an exception: ${errors[0]!.error}`);
    const completed = mine.filter((r) => r.kind === 'completed').length;
    const declined = mine.filter((r) => r.kind === 'declined').length;
    const edited = mine.filter((r) => r.kind === 'edited');
    const winners = completed + declined + edited.length;
    const { record, events } = await stored(l.store, p.id);
    const effects =
      p.kind === 'external' ? (journal.payments.get(p.id)?.length ?? 0) : (drafts.get(p.id) ?? 0);
    const calls = journal.calls.get(p.id) ?? 0;
    executions += effects;
    if (effects > 1 || calls > 1 || events.filter((e) => e.step === 'claimed').length > 1) {
      doubleExecutions++;
      say(`executed more than once: ${effects} effects, ${calls} provider calls`);
    }
    if (winners !== 1)
      say(
        `${winners} winning decisions (completed ${completed}, declined ${declined}, edited ${edited.length})`,
      );
    // Every decision a client was told had won is what the store holds.
    const expected =
      completed === 1
        ? 'succeeded'
        : declined === 1
          ? 'declined'
          : edited.length === 1
            ? 'superseded'
            : 'one winner';
    if (record.status !== expected) {
      lostDecisions++;
      say(`stored ${record.status}, the winning client was told ${expected}`);
    }
    if ((record.status === 'succeeded') !== (effects === 1))
      say(`status ${record.status} with ${effects} effects`);
    const successors = superseding.get(p.id) ?? 0;
    if (successors !== (record.status === 'superseded' ? 1 : 0))
      say(`${successors} superseding proposals for a ${record.status} proposal`);
    if (record.status === 'superseded' && record.supersededBy !== edited[0]?.outcome)
      say('superseded by another proposal than the winning edit made');
    // Losers heard a named refusal or the stored outcome, never a second execution.
    for (const r of mine) {
      if (r.kind === 'completed' || r.kind === 'declined' || r.kind === 'edited' || r.kind === 'error')
        continue;
      if (r.kind === 'already_completed') {
        if (r.outcome !== record.status)
          say(`a replay returned ${r.outcome}, the store holds ${record.status}`);
      } else if (!['replayed', 'declined', 'superseded'].includes(r.reason ?? '')) {
        say(`${r.client} ${r.action} was refused with ${r.kind}/${r.reason}`);
      }
    }
    const steps = events.map((e) => e.step);
    if (steps.filter((s) => s === 'approved').length !== (record.status === 'succeeded' ? 1 : 0))
      say('the audit does not hold exactly the one approval');
  }
  const audit = await verifyAudit(l.store);
  if (audit.kind !== 'intact') problems.push(`audit broken: ${audit.message}`);
  return { problems, executions, doubleExecutions, lostDecisions };
}

for (const { name, skip } of PROCESS_BACKENDS) {
  describe.skipIf(skip !== undefined)(`races on ${name}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it(
      `${SIZES.raceProcesses} processes × ${SIZES.raceClients} clients on the same ${SIZES.raceProposals} proposals (approve, approve racing decline, approve racing edit): one outcome each, no double execution, no lost decision`,
      async () => {
        const { kinds, races } = mix(SIZES.raceProposals);
        lab = await openLab(name, kinds.length);
        const l = lab;
        const made = await proposeMany(l.engine, kinds, 'run-race');
        const plan: Planned[] = made.map((m, i) => ({ ...m, race: races[i]! }));
        const { results, ms } = await race(l, plan, SIZES.raceProcesses, SIZES.raceClients);
        expect(results).toHaveLength(plan.length * SIZES.raceProcesses * SIZES.raceClients);
        const verdict = await judge(l, plan, results);
        const approvedOnly = plan.filter((p) => p.race === 'approve').length;
        reportFigure({
          suite: 'races',
          what: `${SIZES.raceProcesses} processes × ${SIZES.raceClients} clients, ${plan.length} proposals (approve ${approvedOnly}, vs decline ${plan.filter((p) => p.race === 'decline').length}, vs edit ${plan.filter((p) => p.race === 'edit').length})`,
          backend: name,
          tried: plan.length,
          held: plan.length - new Set(verdict.problems.map((p) => p.split(' ')[2])).size,
          detail: {
            clientCalls: results.length,
            executions: verdict.executions,
            doubleExecutions: verdict.doubleExecutions,
            lostDecisions: verdict.lostDecisions,
            ms,
          },
        });
        expect(verdict.problems).toEqual([]);
        expect(verdict.doubleExecutions).toBe(0);
        expect(verdict.lostDecisions).toBe(0);

        // The judge is not blind: one forged second payment in a copy of the journal is a double execution.
        const paid = plan.find((p) => p.kind === 'external' && readJournal(l.journal).payments.has(p.id))!;
        const forged = join(l.dir, 'forged-journal.jsonl');
        writeFileSync(
          forged,
          `${readFileSync(l.journal, 'utf8')}${JSON.stringify({ type: 'payment', payment: { idempotencyKey: `${paid.id}.2` } })}\n`,
        );
        expect((await judge(l, plan, results, forged)).doubleExecutions).toBe(1);
      },
      TIMEOUT,
    );

    it.skipIf(name !== 'sqlite')(
      `${SIZES.sqliteRaceProcesses} OS processes on one SQLite file race to approve ${SIZES.sqliteRaceProposals} proposals: exactly ${SIZES.sqliteRaceProposals} executions`,
      async () => {
        const kinds: Kind[] = Array.from({ length: SIZES.sqliteRaceProposals }, () => 'external');
        lab = await openLab(name, kinds.length);
        const l = lab;
        const made = await proposeMany(l.engine, kinds, 'run-race-issue-3');
        const plan: Planned[] = made.map((m) => ({ ...m, race: 'approve' }));
        const { results, ms } = await race(l, plan, SIZES.sqliteRaceProcesses, 1);
        const verdict = await judge(l, plan, results);
        const journal = readJournal(l.journal);
        reportFigure({
          suite: 'races',
          what: `${SIZES.sqliteRaceProcesses} OS processes approve the same ${plan.length} proposals (issue 3)`,
          backend: name,
          tried: plan.length,
          held: plan.length - new Set(verdict.problems.map((p) => p.split(' ')[2])).size,
          detail: {
            executions: verdict.executions,
            providerCalls: journal.totalCalls,
            doubleExecutions: verdict.doubleExecutions,
            ms,
          },
        });
        expect(verdict.problems).toEqual([]);
        expect(verdict.executions).toBe(SIZES.sqliteRaceProposals);
        expect(journal.totalCalls).toBe(SIZES.sqliteRaceProposals);
        expect(results.filter((r) => r.kind === 'completed')).toHaveLength(SIZES.sqliteRaceProposals);
      },
      TIMEOUT,
    );
  });
}
