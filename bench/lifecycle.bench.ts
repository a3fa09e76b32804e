/**
 * Full lifecycles per second — propose → approve → execute a local no-op → outcome, all audited —
 * against a raw better-sqlite3 floor that writes the same rows in the same transactions, in one run.
 * Run: npm run bench:lifecycle
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type Actor, createEngine, defineOperation } from '../src/index.js';
import { newId } from '../src/engine/ids.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { printJsonResult } from './json-result.js';
import { AUDIT_COLUMNS, PROPOSAL_COLUMNS } from '../src/store/sql-columns.js';
import { SqliteStore } from '../src/store/sqlite/index.js';

const CYCLES = Number(process.env['CYCLES'] ?? 3000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'));

const noop = defineOperation({
  kind: 'bench.noop',
  scopeVersion: 1,
  scope: z.strictObject({
    tenant: z.string(),
    operation: z.literal('bench.noop'),
    target: z.string(),
    amount_minor: z.number().int(),
  }),
  request: z.strictObject({ target: z.string() }),
  arguments: z.strictObject({ target: z.string(), amount_minor: z.number().int() }),
  prepare: async (r) => ({
    arguments: { target: r.target, amount_minor: 24_049 },
    preview: { title: `No-op on ${r.target}`, amount: 24_049 },
  }),
  effect: 'local',
  execute: async () => ({ ok: true }),
});

const agent: Actor = { id: 'agent:bench', tenant: 'acme', kind: 'agent', roles: [] };
const ada: Actor = { id: 'user:ada', tenant: 'acme', kind: 'operator', roles: ['approver'] };

async function engineRound(round: number): Promise<{ wall: number; cpu: number }> {
  const store = new SqliteStore({ path: join(dir, `engine-${round}.db`) });
  const engine = await createEngine({ store, operations: [noop], limits: BENCH_LIMITS });
  const run = async (i: number) => {
    const p = await engine.propose({
      operation: 'bench.noop',
      request: { target: `t-${i}` },
      tenant: 'acme',
      resource: `t-${i}`,
      requestedBy: agent.id,
      runId: 'run-bench',
    });
    if (p.kind !== 'proposed') throw new Error('propose failed');
    const r = await engine.approveAndExecute({
      tenant: 'acme',
      proposalId: p.proposal.id,
      approver: ada,
      seenDigest: p.proposal.digest,
    });
    if (r.kind !== 'completed' || r.outcome.kind !== 'succeeded') throw new Error('lifecycle failed');
  };
  for (let i = 0; i < 200; i++) await run(-i - 1);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CYCLES; i++) await run(i);
  const wall = Number(process.hrtime.bigint() - t0) / 1e3;
  const c = process.cpuUsage(cpu0);
  await engine.close();
  return { wall, cpu: c.user + c.system };
}

// The floor: the same rows (same sizes, same id scheme) in the same three transactions — propose;
// claim; outcome — written by hand with prepared statements: no parsing, canonicalization, digests,
// checks or chaining, only the bytes the engine stores.
async function floorRound(round: number): Promise<{ wall: number; cpu: number }> {
  type Statement = { run(...p: unknown[]): unknown; get(...p: unknown[]): unknown };
  type Db = { prepare(sql: string): Statement; pragma(s: string): unknown; close(): void };
  const path = join(dir, `floor-${round}.db`);
  const schema = new SqliteStore({ path });
  await schema.migrate();
  await schema.close();
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Db;
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const cols = PROPOSAL_COLUMNS.map(([, c]) => c);
  const insertP = db.prepare(
    `INSERT INTO countersign_proposals (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
  );
  const audit = db.prepare(
    `INSERT INTO countersign_audit_events (${AUDIT_COLUMNS.map(([, c]) => c).join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`,
  );
  const head = db.prepare(
    'INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (?, ?, ?) ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, chain_hash = excluded.chain_hash',
  );
  const claim = db.prepare(
    "UPDATE countersign_proposals SET status = 'executing', current_attempt = 1, decided_by = ?, decided_at = ?, approval_kind = 'exact', updated_at = ? WHERE tenant = ? AND id = ? AND status = 'pending'",
  );
  const insertA = db.prepare(
    "INSERT INTO countersign_attempts (tenant, id, proposal_id, number, idempotency_key, status, lease_until, command_id, started_at, finished_at) VALUES (?, ?, ?, 1, ?, 'executing', ?, NULL, ?, NULL)",
  );
  const read = db.prepare('SELECT * FROM countersign_proposals WHERE tenant = ? AND id = ?');
  const finish = db.prepare(
    "UPDATE countersign_proposals SET status = 'succeeded', outcome_json = ?, updated_at = ? WHERE tenant = ? AND id = ? AND status = 'executing' AND current_attempt = 1",
  );
  const finishA = db.prepare(
    "UPDATE countersign_attempts SET status = 'completed', finished_at = ? WHERE tenant = ? AND id = ? AND status = 'executing'",
  );
  const hash = () => randomBytes(32).toString('hex');
  const digests = JSON.stringify({ approved: hash(), proposed: hash(), seen: hash() });
  let seq = 0;
  const event = (proposalId: string, step: string, attemptId: string | null) => {
    seq++;
    const chain = hash();
    audit.run(
      'acme',
      seq,
      newId('evt'),
      proposalId,
      attemptId,
      'run-bench',
      step,
      'user:ada',
      step === 'approved' ? 'approved' : null,
      digests,
      null,
      '{"attempt":1}',
      Date.now(),
      hash(),
      chain,
      null,
    );
    head.run('acme', seq, chain);
  };
  const cycle = (i: number) => {
    const id = newId('prp');
    const now = Date.now();
    begin.run();
    insertP.run(
      'acme',
      id,
      3,
      'run-bench',
      null,
      `t-${i}`,
      'agent:bench',
      null,
      null,
      'bench.noop',
      1,
      1,
      `{"target":"t-${i}"}`,
      `{"amount_minor":24049,"target":"t-${i}"}`,
      `{"amount_minor":24049,"operation":"bench.noop","target":"t-${i}","tenant":"acme"}`,
      hash(),
      `{"amount":24049,"title":"No-op on t-${i}"}`,
      hash(),
      null,
      'pending',
      now,
      now + 1_800_000,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      0,
      null,
      now,
    );
    event(id, 'proposed', null);
    commit.run();
    begin.run();
    read.get('acme', id);
    claim.run('user:ada', now, now, 'acme', id);
    const attemptId = newId('att');
    insertA.run('acme', attemptId, id, `${id}.1`, now + 300_000, now);
    event(id, 'approved', null);
    event(id, 'claimed', attemptId);
    commit.run();
    begin.run();
    read.get('acme', id);
    finish.run('{"kind":"succeeded","result":{"ok":true}}', now, 'acme', id);
    finishA.run(now, 'acme', attemptId);
    event(id, 'outcome', attemptId);
    commit.run();
  };
  for (let i = 0; i < 200; i++) cycle(-i - 1);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CYCLES; i++) cycle(i);
  const wall = Number(process.hrtime.bigint() - t0) / 1e3;
  const c = process.cpuUsage(cpu0);
  db.close();
  return { wall, cpu: c.user + c.system };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const engineRuns: { wall: number; cpu: number }[] = [];
const floorRuns: { wall: number; cpu: number }[] = [];
for (let round = 0; round < ROUNDS; round++) {
  if (process.env['ONLY'] !== 'engine') floorRuns.push(await floorRound(round));
  engineRuns.push(await engineRound(round));
}
const e = {
  wall: median(engineRuns.map((r) => r.wall)) / CYCLES,
  cpu: median(engineRuns.map((r) => r.cpu)) / CYCLES,
};
const f = {
  wall: median(floorRuns.map((r) => r.wall)) / CYCLES,
  cpu: median(floorRuns.map((r) => r.cpu)) / CYCLES,
};
const row = (name: string, x: { wall: number; cpu: number }) =>
  `| ${name.padEnd(34)} | ${Math.round(1e6 / x.wall)
    .toLocaleString('en-US')
    .padStart(10)} | ${x.wall.toFixed(1).padStart(10)} | ${x.cpu.toFixed(1).padStart(10)} |`;
process.stdout.write(
  `lifecycle benchmark: ${CYCLES} cycles × ${ROUNDS} rounds, medians (WAL, synchronous=NORMAL)\n`,
);
process.stdout.write(
  '| path                               |  cycles/s  |  wall µs   |  CPU µs    |\n|---|---|---|---|\n',
);
process.stdout.write(
  `${row('raw better-sqlite3 floor', f)}\n${row('countersign engine (full lifecycle)', e)}\n`,
);
process.stdout.write(
  `ratio engine / floor: wall ${(e.wall / f.wall).toFixed(2)}×, CPU ${(e.cpu / f.cpu).toFixed(2)}× (target ≤ 1.3× CPU)\n`,
);
rmSync(dir, { recursive: true, force: true });
printJsonResult({ cpu_ratio: e.cpu / f.cpu, wall_ratio: e.wall / f.wall });
