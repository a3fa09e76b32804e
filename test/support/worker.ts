/**
 * A child process of the reliability suites (run with `node --import tsx test/support/worker.ts
 * TASK [options]`). It opens the store, builds an engine with the demo operations and a provider
 * whose memory is a journal file shared by every process, and then:
 *
 * - `execute`: approves and executes the proposals in `--proposals FILE` (`[{ id, digest }]`).
 *   With `--fault kill --at POINT` it SIGKILLs itself at that fault point; with
 *   `--fault stop --at POINT` it SIGSTOPs itself there and carries on when the parent sends
 *   SIGCONT. Either way it first appends `{ point, proposalId, attemptNumber }` to `--marker FILE`.
 * - `recover`: runs recovery sweeps until one finds nothing, then reconciles every proposal left
 *   `needs_reconciliation`.
 * - `race`: runs `--clients N` concurrent clients over the plan in `--plan FILE`
 *   (`[{ id, digest, race }]`), starting at `--start-at` (epoch ms): every client approves a
 *   proposal whose race is `approve`; for `decline` and `edit` races, even clients approve and odd
 *   ones decline or edit. Each client takes the proposals in its own shuffled order. Writes every
 *   client's result to `--out FILE`.
 *
 * Prints one JSON line on success. Never used by production code.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createEngine, type Engine } from '../../src/index.js';
import { type FaultPoint, withFaults } from '../../src/engine/faults.js';
import { openStoreAt } from './backends.js';
import {
  operator,
  RECONCILER,
  reliabilityOperations,
  reliabilityWorld,
  TENANT,
} from '../reliability/support/world.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    store: { type: 'string' },
    journal: { type: 'string' },
    invoices: { type: 'string', default: '0' },
    'lease-ms': { type: 'string', default: '300000' },
    'seal-key': { type: 'string' },
    proposals: { type: 'string' },
    fault: { type: 'string' },
    at: { type: 'string' },
    marker: { type: 'string' },
    plan: { type: 'string' },
    clients: { type: 'string', default: '1' },
    process: { type: 'string', default: '0' },
    out: { type: 'string' },
    'start-at': { type: 'string' },
  },
});

function required(name: keyof typeof values): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new Error(`worker: --${name} is required`);
  return value;
}

/** One proposal to act on, with the digest its page showed. */
interface Target {
  readonly id: string;
  readonly digest: string;
}

/** One entry of a race plan. */
interface PlanItem extends Target {
  readonly race: 'approve' | 'decline' | 'edit';
}

/** What one client got back for one proposal. */
export interface ClientResult {
  readonly id: string;
  readonly client: string;
  readonly action: 'approve' | 'decline' | 'edit';
  readonly kind: string;
  readonly reason?: string;
  readonly outcome?: string;
  readonly error?: string;
}

function faultHook():
  | ((point: FaultPoint, info: { proposalId: string; attemptNumber: number }) => void)
  | undefined {
  const fault = values.fault;
  if (fault === undefined) return undefined;
  const at = required('at') as FaultPoint;
  const marker = required('marker');
  let armed = true;
  return (point, info) => {
    if (point !== at || !armed) return;
    armed = false;
    appendFileSync(
      marker,
      `${JSON.stringify({ point, proposalId: info.proposalId, attemptNumber: info.attemptNumber, pid: process.pid })}\n`,
    );
    if (fault === 'kill') process.kill(process.pid, 'SIGKILL');
    // SIGSTOP stops every thread at once; the process carries on from here after SIGCONT.
    else process.kill(process.pid, 'SIGSTOP');
  };
}

async function openEngine(): Promise<Engine> {
  const world = reliabilityWorld({ invoices: Number(values.invoices), journal: required('journal') });
  const store = await openStoreAt(required('store'));
  const faults = faultHook();
  const sealKey = values['seal-key'];
  return createEngine(
    withFaults(
      {
        store,
        operations: reliabilityOperations(world),
        leaseMs: Number(values['lease-ms']),
        // One operator racing itself hundreds of times a second is refused `replayed` far more
        // than 60 times a minute: what these clients test is the race, not the refusal budget
        // (test/engine/audit-budget.test.ts).
        auditedLimits: false,
        ...(sealKey ? { sealKey } : {}),
      },
      faults,
    ),
  );
}

async function executeTask(engine: Engine): Promise<unknown> {
  const targets = JSON.parse(readFileSync(required('proposals'), 'utf8')) as Target[];
  const results: { id: string; kind: string; outcome?: string; reason?: string }[] = [];
  for (const target of targets) {
    const result = await engine.proposals.approveAndExecute({
      tenant: TENANT,
      proposalId: target.id,
      approver: operator('worker'),
      seenDigest: target.digest,
    });
    if (result.kind === 'completed' || result.kind === 'already_completed')
      results.push({ id: target.id, kind: result.kind, outcome: result.outcome.kind });
    else if (result.kind === 'not_approvable')
      results.push({ id: target.id, kind: result.kind, reason: result.reason });
    else results.push({ id: target.id, kind: result.kind });
  }
  return { results };
}

async function recoverTask(engine: Engine): Promise<unknown> {
  const totals = {
    sweeps: 0,
    examined: 0,
    rerun: 0,
    resent: 0,
    toReconciliation: 0,
    parked: 0,
    skipped: 0,
  };
  for (;;) {
    const summary = await engine.sweeps.recover({ limit: 1_000 });
    totals.sweeps++;
    totals.examined += summary.examined;
    totals.rerun += summary.rerun;
    totals.resent += summary.resent;
    totals.toReconciliation += summary.toReconciliation;
    totals.parked += summary.parked;
    totals.skipped += summary.skipped;
    if (summary.examined === 0 || totals.sweeps > 100) break;
  }
  const reconciled: Record<string, number> = {};
  let cursor: string | undefined;
  const waiting: string[] = [];
  do {
    const page = await engine.proposals.list(TENANT, {
      status: 'needs_reconciliation',
      limit: 200,
      ...(cursor ? { cursor } : {}),
    });
    waiting.push(...page.items.map((p) => p.id));
    cursor = page.nextCursor;
  } while (cursor);
  for (const id of waiting) {
    const result = await engine.proposals.reconcile({ tenant: TENANT, proposalId: id, actor: RECONCILER });
    const key =
      result.kind === 'reconciled'
        ? `reconciled_${result.outcome.kind}`
        : result.kind === 'still_pending'
          ? 'still_pending'
          : result.reason;
    reconciled[key] = (reconciled[key] ?? 0) + 1;
  }
  return { recovery: totals, reconciled };
}

// mulberry32: a small seeded generator, so each client's order is reproducible.
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const next = random(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function act(engine: Engine, item: PlanItem, client: string, index: number): Promise<ClientResult> {
  const action: ClientResult['action'] = item.race === 'approve' || index % 2 === 0 ? 'approve' : item.race;
  const actor = operator(client);
  const base = { id: item.id, client, action };
  try {
    if (action === 'approve') {
      const r = await engine.proposals.approveAndExecute({
        tenant: TENANT,
        proposalId: item.id,
        approver: actor,
        seenDigest: item.digest,
      });
      return r.kind === 'completed' || r.kind === 'already_completed'
        ? { ...base, kind: r.kind, outcome: r.outcome.kind }
        : r.kind === 'not_approvable'
          ? { ...base, kind: r.kind, reason: r.reason }
          : { ...base, kind: r.kind };
    }
    if (action === 'decline') {
      const r = await engine.proposals.decline({
        tenant: TENANT,
        proposalId: item.id,
        actor,
        reason: `declined by ${client}`,
      });
      return r.kind === 'declined' ? { ...base, kind: r.kind } : { ...base, kind: r.kind, reason: r.reason };
    }
    const r = await engine.proposals.edit({
      tenant: TENANT,
      proposalId: item.id,
      editor: actor,
      changes: { subject: `Edited by ${client}` },
    });
    return r.kind === 'edited'
      ? { ...base, kind: r.kind, outcome: r.proposal.id }
      : { ...base, kind: r.kind, reason: r.reason };
  } catch (error) {
    return {
      ...base,
      kind: 'error',
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
}

async function raceTask(engine: Engine): Promise<unknown> {
  const plan = JSON.parse(readFileSync(required('plan'), 'utf8')) as PlanItem[];
  const clients = Number(values.clients);
  const processIndex = Number(values.process);
  // Every process boots first, then all start at once, so the clients really race.
  const startAt = Number(values['start-at'] ?? 0);
  if (startAt > Date.now()) await new Promise((resolve) => setTimeout(resolve, startAt - Date.now()));
  const started = Date.now();
  const lanes = Array.from({ length: clients }, async (_, c) => {
    const index = processIndex * clients + c;
    const client = `p${processIndex}c${c}`;
    const results: ClientResult[] = [];
    for (const item of shuffled(plan, 1_000 * processIndex + c + 1))
      results.push(await act(engine, item, client, index));
    return results;
  });
  const results = (await Promise.all(lanes)).flat();
  writeFileSync(required('out'), JSON.stringify(results));
  return {
    results: results.length,
    errors: results.filter((r) => r.kind === 'error').length,
    ms: Date.now() - started,
  };
}

const task = positionals[0];
const engine = await openEngine();
try {
  const output =
    task === 'execute'
      ? await executeTask(engine)
      : task === 'recover'
        ? await recoverTask(engine)
        : task === 'race'
          ? await raceTask(engine)
          : undefined;
  if (output === undefined) throw new Error(`worker: unknown task ${String(task)}`);
  process.stdout.write(`${JSON.stringify(output)}\n`);
} finally {
  await engine.close();
}
