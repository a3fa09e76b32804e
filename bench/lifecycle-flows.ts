/**
 * The two sides of the lifecycle benchmark, shared by `bench:lifecycle` (timed), `bench:statements`
 * (each SQL statement timed) and `bench:peers` (the same-rows floor): the engine running the full
 * lifecycle of an approved `invoice.pay` (an external operation: propose → approve + claim → the
 * command recorded → the payment provider called → the outcome), and the floor writing the same
 * rows in the same four transactions by hand, reads included.
 */
import { randomBytes } from 'node:crypto';
import { demoOperations, demoWorld, type DemoWorld } from '../src/demo/demo-world.js';
import { type Actor, createEngine } from '../src/index.js';
import { newId } from '../src/engine/ids.js';
import { AUDIT_COLUMNS, PROPOSAL_COLUMNS } from '../src/store/sql-columns.js';
import type { SqliteDatabase, SqliteStore } from '../src/store/sqlite/index.js';
import { walAutocheckpointPages } from '../src/store/sqlite/sqlite-driver.js';
import type { AuditDigests, AuditStep } from '../src/audit/event.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { ContractChecks } from './contract-checks.js';

const ada: Actor = { id: 'user:ada@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] };

/** One lifecycle per call (`i` names its invoice), and how to close what it opened. */
export interface LifecycleFlow {
  cycle(i: number): Promise<void>;
  close(): Promise<void>;
}

/** An open invoice named by `i` in `world`, for one lifecycle to pay. */
function openInvoice(world: DemoWorld, i: number): string {
  const id = `inv-l${i}`;
  world.invoices.add({
    tenant: 'acme',
    id,
    supplierName: 'Northwind Paper Co.',
    supplierAccount: 'acct-supplier-7',
    dueMinor: 24_049,
    currency: 'USD',
    status: 'open',
  });
  return id;
}

/** The engine: propose → approve + execute `invoice.pay` through the provider stub → outcome, all audited. */
export async function engineFlow(store: SqliteStore): Promise<LifecycleFlow> {
  const world = demoWorld();
  const engine = await createEngine({ store, operations: demoOperations(world), limits: BENCH_LIMITS });
  return {
    async cycle(i) {
      const p = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: openInvoice(world, i) },
        tenant: 'acme',
        resource: 'invoice:*',
        requestedBy: 'agent:acme-assistant',
        runId: `run-${i}`,
      });
      if (p.kind !== 'proposed') throw new Error(`propose failed: ${p.kind}`);
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
type Db = {
  prepare(sql: string): Statement;
  pragma(s: string, options?: { simple: boolean }): unknown;
  close(): void;
};

/** Options of {@link floorFlow}. */
export interface FloorOptions {
  /**
   * Pay each invoice through the same provider stub between the command's transaction and the
   * outcome's (default true; false where the caller's own flow already paid it, as in bench:peers).
   */
  readonly pay?: boolean;
  /**
   * Also do the work the contract asks of any design (`ContractChecks`: schemas, canonical JSON,
   * digests, the claim's and the command's comparisons, the hash chain), default false.
   */
  readonly checks?: boolean;
}

/**
 * The floor: the rows an approved `invoice.pay` writes (same sizes, same id scheme, the proposal's
 * rate counters included) in the engine's four transactions, with the reads the engine makes inside
 * them: propose (proposal, chain head read, `proposed` event, head, rate counters); claim (proposal
 * read, compare-and-set to executing, attempt, head read, `approved` and `claimed` events, head);
 * command (attempt's command and lease, head read, `revalidated` and `command` events, head); then the
 * provider call; outcome (proposal and attempt finished, head read, `outcome` event, head). Written
 * by hand with prepared statements on `db` (a database the store's migrations made): no parsing,
 * canonicalization, digests, checks or chaining, only the bytes the engine stores; with `checks`,
 * also the contract's own work (`contract-checks.ts`), and the real digests and chain hashes stored.
 */
export function floorFlow(database: SqliteDatabase, options: FloorOptions = {}): LifecycleFlow {
  const db = database as unknown as Db;
  db.pragma('journal_mode = WAL');
  db.pragma(
    `wal_autocheckpoint = ${walAutocheckpointPages(db.pragma('page_size', { simple: true }) as number)}`,
  );
  db.pragma('synchronous = NORMAL');
  const world = demoWorld();
  const pay = options.pay ?? true;
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const cols = PROPOSAL_COLUMNS.map(([, c]) => c);
  const insertP = db.prepare(
    `INSERT INTO countersign_proposals (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
  );
  const auditRow = `(${AUDIT_COLUMNS.map(() => '?').join(', ')})`;
  const auditInto = `INSERT INTO countersign_audit_events (${AUDIT_COLUMNS.map(([, c]) => c).join(', ')}) VALUES `;
  const audit1 = db.prepare(`${auditInto}${auditRow}`);
  const audit2 = db.prepare(`${auditInto}${auditRow}, ${auditRow}`);
  const readHead = db.prepare('SELECT seq, chain_hash FROM countersign_audit_heads WHERE tenant = ?');
  const head = db.prepare(
    'INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (?, ?, ?) ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, chain_hash = excluded.chain_hash',
  );
  const claim = db.prepare(
    "UPDATE countersign_proposals SET status = 'executing', decided_by = ?, decided_at = ?, approval_kind = 'exact', grant_id = NULL, current_attempt = 1, updated_at = ? WHERE tenant = ? AND id = ? AND status = 'pending' AND current_attempt = 0",
  );
  const insertA = db.prepare(
    "INSERT INTO countersign_attempts (tenant, id, proposal_id, number, idempotency_key, status, lease_until, command_id, started_at, finished_at) VALUES (?, ?, ?, 1, ?, 'executing', ?, NULL, ?, NULL)",
  );
  const command = db.prepare(
    "UPDATE countersign_attempts SET command_id = ?, lease_until = ? WHERE tenant = ? AND id = ? AND status = 'executing'",
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
  const checks = options.checks ? new ContractChecks(world) : undefined;
  // Without the checks, every proposal stores the same two random digests, as bytes.
  const fixedDigest = hash();
  const fixedScopeDigest = hash();
  let seq = 0;
  let chainHash = hash();
  const event = (
    proposalId: string,
    runId: string,
    step: AuditStep,
    actor: string,
    attemptId: string | null,
    digests: AuditDigests,
    commandId: string | null,
    detail: Record<string, unknown>,
  ): unknown[] => {
    const id = newId('evt');
    const chained = checks?.event({
      proposalId,
      runId,
      step,
      actor,
      attemptId,
      digests,
      commandId,
      detail,
      id,
    });
    seq = chained?.seq ?? seq + 1;
    chainHash = chained?.chainHash ?? hash();
    const reason = step === 'approved' ? 'approved' : null;
    return [
      'acme',
      seq,
      id,
      proposalId,
      attemptId,
      runId,
      step,
      actor,
      reason,
      JSON.stringify(digests),
      commandId,
      JSON.stringify(detail),
      Date.now(),
      chained?.leafHash ?? hash(),
      chainHash,
      null,
    ];
  };
  const toHead = () => {
    readHead.get('acme');
    return seq;
  };
  const cycle = async (i: number): Promise<void> => {
    const id = newId('prp');
    const runId = `run-${i}`;
    const invoiceId = checks ? openInvoice(world, i) : `inv-f${i}`;
    const contract = checks?.propose(invoiceId, runId) ?? {
      argumentsJson: `{"amount_minor":24049,"currency":"USD","destination_account_id":"acct-supplier-7","invoice_id":"${invoiceId}"}`,
      previewJson: `{"amount":{"currency":"USD","display":"240.49 USD","minor":24049},"destination_account_id":"acct-supplier-7","invoice_id":"${invoiceId}","supplier":"Northwind Paper Co.","title":"Pay Northwind Paper Co. 240.49 USD"}`,
      scopeJson: `{"amount_minor":24049,"currency":"USD","destination_account_id":"acct-supplier-7","invoice_id":"${invoiceId}","operation":"invoice.pay","tenant":"acme"}`,
      scopeDigest: fixedScopeDigest,
      digest: fixedDigest,
    };
    const { digest, scopeDigest } = contract;
    const now = Date.now();
    begin.run();
    insertP.run(
      'acme',
      id,
      3,
      runId,
      null,
      `invoice:${invoiceId}`,
      'agent:acme-assistant',
      null,
      '{"required":1,"roles":[]}',
      'invoice.pay',
      1,
      1,
      `{"invoice_id":"${invoiceId}"}`,
      contract.argumentsJson,
      contract.scopeJson,
      scopeDigest,
      contract.previewJson,
      digest,
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
    toHead();
    audit1.run(
      ...event(id, runId, 'proposed', 'agent:acme-assistant', null, { proposed: digest }, null, {
        operation: 'invoice.pay',
        scopeVersion: 1,
        viewVersion: 1,
        scopeDigest,
      }),
    );
    head.run('acme', seq, chainHash);
    const second = Math.floor(now / 1000);
    rate.all('acme', 'agent:acme-assistant', second, 'acme', second);
    commit.run();

    begin.run();
    const row = read.get('acme', id) as Record<string, string>;
    checks?.claim(
      runId,
      {
        argumentsJson: row['arguments_json']!,
        previewJson: row['preview_json']!,
        scopeJson: row['scope_json']!,
        scopeDigest: row['scope_digest']!,
        digest: row['digest']!,
      },
      digest,
    );
    claim.run(ada.id, now, now, 'acme', id);
    const attemptId = newId('att');
    insertA.run('acme', attemptId, id, `${id}.1`, now + 300_000, now);
    toHead();
    audit2.run(
      ...event(
        id,
        runId,
        'approved',
        ada.id,
        null,
        { proposed: digest, seen: digest, approved: digest },
        null,
        {},
      ),
      ...event(id, runId, 'claimed', ada.id, attemptId, { approved: digest }, null, { attempt: 1 }),
    );
    head.run('acme', seq, chainHash);
    commit.run();

    const request = {
      destination_account_id: 'acct-supplier-7',
      amount_minor: 24_049,
      currency: 'USD',
      reference: invoiceId,
    };
    checks?.command(runId, contract, request);
    const commandId = newId('cmd');
    begin.run();
    command.run(commandId, now + 300_000, 'acme', attemptId);
    toHead();
    audit2.run(
      ...event(id, runId, 'revalidated', 'system:executor', attemptId, { approved: digest }, null, {}),
      ...event(
        id,
        runId,
        'command',
        'system:executor',
        attemptId,
        { approved: digest, requested: scopeDigest },
        commandId,
        { approvedScope: scopeDigest },
      ),
    );
    head.run('acme', seq, chainHash);
    commit.run();

    let paymentId = `pay_f${i}`;
    if (pay) {
      const payment = await world.provider.pay(request, { idempotencyKey: `${id}.1` });
      paymentId = payment.paymentId;
    }
    const invoice = checks ? world.invoices.find('acme', invoiceId) : undefined;
    if (invoice) invoice.status = 'paid';

    begin.run();
    finish.run(
      checks?.outcome(paymentId) ?? `{"kind":"succeeded","result":{"payment_id":"${paymentId}"}}`,
      now,
      'acme',
      id,
    );
    finishA.run(now, 'acme', attemptId);
    toHead();
    audit1.run(
      ...event(id, runId, 'outcome', 'system:executor', attemptId, { approved: digest }, null, {
        outcome: 'succeeded',
      }),
    );
    head.run('acme', seq, chainHash);
    commit.run();
  };
  return {
    cycle,
    async close() {
      db.close();
    },
  };
}
