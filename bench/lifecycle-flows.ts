/**
 * The two sides of the lifecycle benchmark, shared by `bench:lifecycle` (timed) and
 * `bench:statements` (each SQL statement timed): the engine running the full lifecycle of a local
 * no-op operation, and the floor writing the same rows in the same three transactions by hand.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { type Actor, createEngine, defineOperation } from '../src/index.js';
import { newId } from '../src/engine/ids.js';
import { AUDIT_COLUMNS, PROPOSAL_COLUMNS } from '../src/store/sql-columns.js';
import type { SqliteDatabase, SqliteStore } from '../src/store/sqlite/index.js';
import { BENCH_LIMITS } from './bench-limits.js';

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

/** One lifecycle per call (`i` names its target), and how to close what it opened. */
export interface LifecycleFlow {
  cycle(i: number): Promise<void>;
  close(): Promise<void>;
}

/** The engine: propose → approve → execute a local no-op → outcome, all audited. */
export async function engineFlow(store: SqliteStore): Promise<LifecycleFlow> {
  const engine = await createEngine({ store, operations: [noop], limits: BENCH_LIMITS });
  return {
    async cycle(i) {
      const p = await engine.proposals.propose({
        operation: 'bench.noop',
        request: { target: `t-${i}` },
        tenant: 'acme',
        resource: `t-${i}`,
        requestedBy: agent.id,
        runId: 'run-bench',
      });
      if (p.kind !== 'proposed') throw new Error('propose failed');
      const r = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: p.proposal.id,
        approver: ada,
        seenDigest: p.proposal.digest,
      });
      if (r.kind !== 'completed' || r.outcome.kind !== 'succeeded') throw new Error('lifecycle failed');
    },
    close: () => engine.close(),
  };
}

type Statement = {
  run(...p: unknown[]): unknown;
  get(...p: unknown[]): unknown;
  all(...p: unknown[]): unknown[];
};
type Db = { prepare(sql: string): Statement; pragma(s: string): unknown; close(): void };

/**
 * The floor: the same rows (same sizes, same id scheme, the proposal's rate counters included) in
 * the same three transactions — propose; claim; outcome — written by hand with prepared statements on `db` (a database the store's
 * migrations made): no parsing, canonicalization, digests, checks or chaining, only the bytes the
 * engine stores. Synchronous, like the statements it runs.
 */
export function floorFlow(database: SqliteDatabase): LifecycleFlow {
  const db = database as unknown as Db;
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
  // The engine counts each proposal in its requester's and its tenant's counter of the second (the
  // rows proposal quotas read), in the proposal's own transaction.
  const rate = db.prepare(
    "INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created) VALUES (?, ?, ?, 1), (?, '', ?, 1) ON CONFLICT (tenant, requested_by, second) DO UPDATE SET created = countersign_proposal_rates.created + 1 RETURNING requested_by, created",
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
  const cycle = (i: number): void => {
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
    const second = Math.floor(now / 1000);
    rate.all('acme', 'agent:bench', second, 'acme', second);
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
  return {
    async cycle(i) {
      cycle(i);
    },
    async close() {
      db.close();
    },
  };
}
