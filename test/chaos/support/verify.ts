import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pool } from '../../reliability/support/children.js';
import { readJournal } from '../../reliability/support/journal.js';
import { expect } from 'vitest';
import { BAD_CLASSES, type Load, type Tokens } from './load.js';
import { BIN, type ServeChild, type ServeChildren } from './serve-child.js';

/** What the store and the provider say after a scenario: each figure but `statuses` must be 0. */
export interface Verdict {
  /** Proposals answered 201 that the server no longer knows. */
  readonly lost: number;
  /** Approvals answered 2xx whose proposal is still pending. */
  readonly lostApprovals: number;
  /** Proposals the provider paid more than once (or an idempotency key paid twice). */
  readonly doublePayments: number;
  /** Proposals the provider paid that the store says were never run or were refused. */
  readonly paidButNotRecorded: number;
  readonly payments: number;
  /** Statuses of the proposals the load made, e.g. `{ succeeded: 40, revision_required: 12 }`. */
  readonly statuses: Readonly<Record<string, number>>;
  /** The first few proposal ids behind a non-zero figure. */
  readonly examples: readonly string[];
  /** Each proposal that ended `terminal_failure`: id, operation, reason and message. */
  readonly failures: readonly string[];
}

// A payment whose proposal says it never ran: the store and the provider disagree.
const NOT_RUN = new Set(['pending', 'declined', 'expired', 'superseded', 'revision_required']);

async function status(url: string, token: string, id: string, failures: string[]): Promise<string> {
  for (let tries = 0; ; tries++) {
    const r = await fetch(`${url}/api/v1/proposals/${id}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await r.json()) as Record<string, unknown>;
    if (r.status === 200 && body['status'] === 'terminal_failure') {
      const outcome = body['outcome'] as { message?: unknown; reason?: unknown } | null;
      failures.push(
        `${id} ${String(body['operation'])}: ${String(outcome?.reason ?? '')} ${String(outcome?.message ?? '')}`,
      );
    }
    if (r.status === 200) return String(body['status']);
    if (r.status === 404) return 'lost';
    // A store that is still coming back: the figure is about what it holds, not when it answers.
    if (r.status === 503 && tries < 20) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    throw new Error(`GET ${id}: ${r.status} ${JSON.stringify(body)}`);
  }
}

/**
 * Reads back, over the API of a running server, every proposal the load was answered 201 for, and
 * the demo provider's journal: lost proposals, lost approvals, double and unrecorded payments.
 */
export async function verify(url: string, tokens: Tokens, load: Load, journal: string): Promise<Verdict> {
  const paid = readJournal(journal);
  const examples: string[] = [];
  const statuses: Record<string, number> = {};
  const known = new Map<string, string>();
  const failures: string[] = [];
  const ids = [...load.proposed];
  // Payments of proposals the demo's own agent made are checked too: the operator token reads any.
  for (const id of paid.payments.keys()) if (!load.proposed.has(id)) ids.push([id, 'acme']);
  const tenantOf = (id: string, fallback: 'acme' | 'globex') => load.proposed.get(id) ?? fallback;
  await pool(
    4,
    ids.map(([id, tenant]) => async () => {
      let s = await status(url, tokens[tenantOf(id, tenant)].operator, id, failures);
      // A payment of the demo agent's: its tenant is not known here; try the other one.
      if (s === 'lost' && !load.proposed.has(id)) s = await status(url, tokens.globex.operator, id, failures);
      known.set(id, s);
      if (load.proposed.has(id)) statuses[s] = (statuses[s] ?? 0) + 1;
    }),
  );
  const note = (id: string, what: string) => {
    if (examples.length < 10) examples.push(`${what} ${id} (${known.get(id)})`);
  };
  let lost = 0;
  let lostApprovals = 0;
  for (const id of load.proposed.keys()) {
    if (known.get(id) === 'lost') {
      lost++;
      note(id, 'lost');
    } else if (load.approved.has(id) && known.get(id) === 'pending') {
      lostApprovals++;
      note(id, 'approval lost');
    }
  }
  let doublePayments = 0;
  let paidButNotRecorded = 0;
  let payments = 0;
  for (const [id, keys] of paid.payments) {
    payments += keys.length;
    if (keys.length > 1 || new Set(keys).size !== keys.length) {
      doublePayments++;
      note(id, `paid ${keys.length} times`);
    }
    const s = known.get(id) ?? 'lost';
    if (NOT_RUN.has(s) || s === 'lost') {
      paidButNotRecorded++;
      note(id, 'paid but recorded as');
    }
  }
  return { lost, lostApprovals, doublePayments, paidButNotRecorded, payments, statuses, examples, failures };
}

/** What a `countersign …` CLI run printed. */
export interface CliResult {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** Runs the built `countersign …args` in `cwd` (audit verify, recover). */
export function countersign(args: readonly string[], cwd: string, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    let out = '';
    let err = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** One row of the chaos summary (scripts/chaos.ts prints them). */
export interface ChaosFigure {
  readonly scenario: string;
  readonly backend: 'sqlite' | 'postgres' | '-';
  /** Faults injected (kills, restarts, pauses…). */
  readonly faults: number;
  readonly figures: Readonly<Record<string, number | string>>;
}

/**
 * Appends a figure to `$COUNTERSIGN_CHAOS_REPORT/figures.jsonl` when set (scripts/chaos.ts sets
 * it and prints the table); nothing otherwise: tests never write to the console.
 */
export function reportChaos(figure: ChaosFigure): void {
  const dir = process.env['COUNTERSIGN_CHAOS_REPORT'];
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, 'figures.jsonl'), `${JSON.stringify(figure)}\n`);
}

/** What every scenario holds to at its end, whatever it broke. */
export interface ScenarioEnd {
  readonly serve: ServeChild;
  readonly children: ServeChildren;
  readonly load: Load;
  readonly verdict: Verdict;
  readonly audit: CliResult;
  /** The scenario's own figures and findings, printed with any failed assertion. */
  readonly extra: Readonly<Record<string, unknown>>;
}

/**
 * Asserts what every chaos scenario promises: the server alive with no exit the test did not
 * cause, no bad answer class, nothing paid twice or paid unrecorded, nothing lost, the audit chain
 * intact. Returns the failure context, for the scenario's own assertions.
 */
export function expectHeld(end: ScenarioEnd): string {
  const { serve, children, load, verdict, audit } = end;
  const context = JSON.stringify(
    {
      ...end.extra,
      reasons: Object.fromEntries(load.reasons),
      problems: load.problems,
      examples: verdict.examples,
      failures: verdict.failures,
      exits: children.unexpectedExits,
      errors: serve.errors,
    },
    null,
    1,
  );
  expect(serve.alive(), context).toBe(true);
  expect(children.unexpectedExits, context).toEqual([]);
  for (const bad of BAD_CLASSES) expect(load.tally[bad], `${bad}: ${context}`).toBe(0);
  expect(verdict.doublePayments, context).toBe(0);
  expect(verdict.lost, context).toBe(0);
  expect(verdict.lostApprovals, context).toBe(0);
  expect(verdict.paidButNotRecorded, context).toBe(0);
  expect(audit.code, `${audit.out}${audit.err}`).toBe(0);
  return context;
}
