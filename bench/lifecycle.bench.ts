/**
 * Full lifecycles per second — propose → approve → execute a local no-op → outcome, all audited —
 * against a raw better-sqlite3 floor that writes the same rows in the same transactions, in one run.
 * Run: npm run bench:lifecycle
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type Actor, createEngine, defineOperation } from '../src/index.js';
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
  const engine = await createEngine({ store, operations: [noop] });
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

// The floor: the same rows in the same three transactions (propose; claim; outcome), written by
// hand with prepared statements and no canonicalization, digests, parsing or checks.
function floorRound(round: number): { wall: number; cpu: number } {
  type Db = {
    prepare(sql: string): { run(...p: unknown[]): unknown; get(...p: unknown[]): unknown };
    exec(sql: string): void;
    pragma(s: string): unknown;
    close(): void;
  };
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Db;
  const store = new SqliteStore({ path: join(dir, `floor-${round}.db`) });
  void store.migrate().then(() => store.close());
  return new Promise<void>((resolve) => setTimeout(resolve, 50)).then(() => {
    const db = new Database(join(dir, `floor-${round}.db`));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const begin = db.prepare('BEGIN IMMEDIATE');
    const commit = db.prepare('COMMIT');
    const cols =
      'tenant, id, format_version, run_id, section, resource, requested_by, operation, scope_version, view_version, request_json, arguments_json, scope_json, scope_digest, preview_json, digest, seal, status, created_at, expires_at, supersedes, superseded_by, decided_by, decided_at, approval_kind, grant_id, decision_note, current_attempt, outcome_json, updated_at';
    const insertP = db.prepare(
      `INSERT INTO countersign_proposals (${cols}) VALUES (${cols
        .split(',')
        .map(() => '?')
        .join(',')})`,
    );
    const audit = db.prepare(
      'INSERT INTO countersign_audit_events (tenant, seq, id, proposal_id, attempt_id, run_id, step, actor, reason, digests_json, command_id, detail_json, at, leaf_hash, chain_hash, seal) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)',
    );
    const head = db.prepare(
      'INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (?, ?, ?) ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, chain_hash = excluded.chain_hash',
    );
    const claim = db.prepare(
      "UPDATE countersign_proposals SET status = 'executing', current_attempt = 1 WHERE tenant = ? AND id = ? AND status = 'pending'",
    );
    const insertA = db.prepare(
      "INSERT INTO countersign_attempts (tenant, id, proposal_id, number, idempotency_key, status, lease_until, command_id, started_at, finished_at) VALUES (?, ?, ?, 1, ?, 'executing', 0, NULL, 0, NULL)",
    );
    const read = db.prepare('SELECT * FROM countersign_proposals WHERE tenant = ? AND id = ?');
    const finish = db.prepare(
      "UPDATE countersign_proposals SET status = 'succeeded', outcome_json = ? WHERE tenant = ? AND id = ? AND status = 'executing' AND current_attempt = 1",
    );
    const finishA = db.prepare(
      "UPDATE countersign_attempts SET status = 'completed' WHERE tenant = ? AND id = ? AND status = 'executing'",
    );
    const h = 'a'.repeat(64);
    let seq = 0;
    const ev = (id: string, step: string) => {
      seq++;
      audit.run(
        'acme',
        seq,
        `evt_${seq}`,
        id,
        null,
        'run-bench',
        step,
        'x',
        null,
        '{}',
        null,
        '{}',
        0,
        h,
        h,
        null,
      );
      head.run('acme', seq, h);
    };
    const cycle = (i: number) => {
      const id = `prp_${i}_${randomBytes(4).toString('hex')}`;
      begin.run();
      insertP.run(
        'acme',
        id,
        1,
        'run-bench',
        null,
        `t-${i}`,
        'agent:bench',
        'bench.noop',
        1,
        1,
        '{"target":"t"}',
        '{"amount_minor":24049,"target":"t"}',
        '{}',
        h,
        '{}',
        h,
        null,
        'pending',
        0,
        9e15,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        0,
        null,
        0,
      );
      ev(id, 'proposed');
      commit.run();
      begin.run();
      read.get('acme', id);
      claim.run('acme', id);
      insertA.run('acme', `att_${id}`, id, `${id}.1`);
      ev(id, 'approved');
      ev(id, 'claimed');
      commit.run();
      begin.run();
      read.get('acme', id);
      finish.run('{"kind":"succeeded","result":{"ok":true}}', 'acme', id);
      finishA.run('acme', `att_${id}`);
      ev(id, 'outcome');
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
  }) as unknown as { wall: number; cpu: number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const engineRuns: { wall: number; cpu: number }[] = [];
const floorRuns: { wall: number; cpu: number }[] = [];
for (let round = 0; round < ROUNDS; round++) {
  floorRuns.push(await floorRound(round));
  engineRuns.push(await engineRound(round));
}
void createHash;
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
  `ratio engine / floor: wall ${(e.wall / f.wall).toFixed(2)}×, CPU ${(e.cpu / f.cpu).toFixed(2)}× (target ≤ 1.5×)\n`,
);
rmSync(dir, { recursive: true, force: true });
