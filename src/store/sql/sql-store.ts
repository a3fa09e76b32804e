import type { AuditChainer } from '../../audit/chain.js';
import type { AuditEvent, ChainHead, QueuedAuditEvent } from '../../audit/event.js';
import type { LocalTransaction } from '../../operation/define-operation.js';
import { assertStorable, isStorableText } from '../unstorable-value.js';
import type {
  ApprovalRecord,
  AttemptPatch,
  AttemptRecord,
  AttemptStatus,
  GrantRecord,
  ProposalPatch,
  ProposalRecord,
} from '../records.js';
import {
  auditFromRow,
  auditPageSql,
  auditRow,
  QUEUE_COLUMNS,
  queuedFromRow,
  queueRow,
} from '../sql-audit.js';
import {
  APPROVAL_COLUMNS,
  ATTEMPT_COLUMNS,
  AUDIT_COLUMNS,
  columnOf,
  fromRow,
  GRANT_COLUMNS,
  PROPOSAL_COLUMNS,
  toRow,
} from '../sql-columns.js';
import {
  countProposalsSql,
  countRateSql,
  opensRateSecond,
  proposalCountsOf,
  pruneRatesSql,
} from '../sql-counts.js';
import { GRANT_SQL } from '../sql-grants.js';
import { countMatchingSql, listProposalsSql } from '../sql-proposals.js';
import type {
  AuditQuery,
  GrantHistory,
  GrantQuery,
  GrantStateSeal,
  ProposalCountQuery,
  ProposalFilter,
  ProposalQuery,
  Store,
  StoreCapabilities,
  StoreHealth,
  StoreReader,
  StoreTransaction,
  TransactionOptions,
} from '../store.js';
import type { SqlDriver, SqlSession } from './driver.js';
import { CorruptAuditChainError } from '../store-errors.js';
import { SqlQuery, sql, valuesStatement } from './sql.js';

/** One versioned schema migration: statements (scripts on SQLite) applied in one transaction. */
export interface SqlMigration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

/** What `migrateWithReport()` did. */
export interface MigrationReport {
  readonly applied: readonly { readonly version: number; readonly name: string }[];
  readonly alreadyApplied: readonly { readonly version: number; readonly name: string }[];
}

const columnsOf = (columns: readonly (readonly [string, string])[]) => columns.map(([, c]) => c);
const PROPOSAL_COLS = columnsOf(PROPOSAL_COLUMNS);
const ATTEMPT_COLS = columnsOf(ATTEMPT_COLUMNS);
const AUDIT_COLS = columnsOf(AUDIT_COLUMNS);
const GRANT_COLS = columnsOf(GRANT_COLUMNS);
const APPROVAL_COLS = columnsOf(APPROVAL_COLUMNS);
const insertInto = (table: string, columns: readonly string[]) =>
  valuesStatement(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (`, columns.length, ')');
const INSERT_PROPOSAL = insertInto('countersign_proposals', PROPOSAL_COLS);
const INSERT_ATTEMPT = insertInto('countersign_attempts', ATTEMPT_COLS);
// An event goes where its tenant's head says the chain ends. A row already there was not written
// by the engine (a database writer's): the insert skips it, so the append sees 0 rows written and
// refuses (CorruptAuditChainError) without a failed statement, which would end a PostgreSQL
// transaction. Only the place conflicts this way: a second event with an id the chain holds is a bug.
const ON_TAKEN_PLACE = ' ON CONFLICT (tenant, seq) DO NOTHING';
const INSERT_AUDIT = valuesStatement(
  `INSERT INTO countersign_audit_events (${AUDIT_COLS.join(', ')}) VALUES (`,
  AUDIT_COLS.length,
  `)${ON_TAKEN_PLACE}`,
);
// Queued rows come back with the first event of their tenant past its committed head, if any: the
// engine writes an event and its head in one commit, so such an event is a database writer's, and
// the queuing transaction is refused before it commits, like one that chains.
const QUEUED_PAST_HEAD = ` RETURNING tenant, (SELECT e.seq FROM countersign_audit_events e WHERE e.tenant = countersign_audit_queue.tenant AND e.seq > COALESCE((SELECT h.seq FROM countersign_audit_heads h WHERE h.tenant = countersign_audit_queue.tenant), 0) ORDER BY e.seq LIMIT 1) AS foreign_seq`;
const INSERT_QUEUED = valuesStatement(
  `INSERT INTO countersign_audit_queue (${QUEUE_COLUMNS.join(', ')}) VALUES (`,
  QUEUE_COLUMNS.length,
  `)${QUEUED_PAST_HEAD}`,
);
// Queued events chained per statement round: bounds one chaining transaction's reads.
const CHAIN_BATCH = 500;
// Queue reads of one chaining pass while it keeps finding events (see takeHeadAndDrain).
const PASS_READS = 3;
// How long a read waits for the chaining this store's commits started (see read).
const CHAINING_WAIT_MS = 1_000;

/**
 * The one SQL store: every statement of the {@link Store} contract written once (the `sql` tag),
 * over a {@link SqlDriver} that runs it on SQLite, PostgreSQL or PGlite. What differs between
 * dialects is asked of the driver's capability flags, never of its name.
 */
export class SqlStore implements Store {
  readonly capabilities: StoreCapabilities;
  readonly #driver: SqlDriver;
  readonly #migrations: readonly SqlMigration[];
  // This store's transactions and chaining passes holding or waiting for each tenant's head.
  readonly #atHead = new Map<string, number>();
  // Chaining after commits whose callers went on without waiting for it (see transaction).
  readonly #chaining = new Set<Promise<void>>();
  // Events returned unchained to callers still waiting for their chaining, by id.
  readonly #waiting = new Map<string, AuditEvent>();
  readonly #passes = new Map<
    string,
    {
      running: Promise<Map<string, AuditEvent>> | undefined;
      next: Promise<Map<string, AuditEvent>> | undefined;
    }
  >();

  constructor(driver: SqlDriver, migrations: readonly SqlMigration[]) {
    this.#driver = driver;
    this.#migrations = migrations;
    this.capabilities = Object.freeze({
      name: driver.name,
      multiProcess: driver.capabilities.multiProcess,
      skipLocked: driver.capabilities.skipLocked,
    });
  }

  /** Applies pending migrations in one transaction. Safe to call on every start, from many instances at once. */
  async migrate(): Promise<void> {
    await this.migrateWithReport();
  }

  /**
   * Like `migrate()`, and says what it did: the migrations applied now and those already there.
   * Used by `countersign migrate`.
   */
  migrateWithReport(): Promise<MigrationReport> {
    return this.#driver.transaction(async (session) => {
      await this.#driver.beforeMigrations(session);
      await session.exec(
        'CREATE TABLE IF NOT EXISTS countersign_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
      );
      const present = new Set(
        (await session.all(sql`SELECT version FROM countersign_migrations`)).map((r) => Number(r['version'])),
      );
      const applied: { version: number; name: string }[] = [];
      for (const m of this.#migrations) {
        if (present.has(m.version)) continue;
        for (const statement of m.statements) await session.exec(statement);
        await session.run(
          sql`INSERT INTO countersign_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${Date.now()})`,
        );
        applied.push({ version: m.version, name: m.name });
      }
      return {
        applied,
        alreadyApplied: this.#migrations
          .filter((m) => present.has(m.version))
          .map((m) => ({ version: m.version, name: m.name })),
      };
    });
  }

  /** One statement on the database: how many of this code's migrations it lacks. */
  health(): Promise<StoreHealth> {
    return this.#driver.read(async (session) => {
      const table =
        this.#driver.capabilities.dialect === 'sqlite'
          ? sql`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'countersign_migrations'`
          : sql`SELECT 1 WHERE to_regclass('countersign_migrations') IS NOT NULL`;
      if ((await session.all(table)).length === 0) return { pendingMigrations: this.#migrations.length };
      const rows = await session.all(sql`SELECT version FROM countersign_migrations`);
      const present = new Set(rows.map((r) => Number(r['version'])));
      return { pendingMigrations: this.#migrations.filter((m) => !present.has(m.version)).length };
    });
  }

  async transaction<T>(
    fn: (tx: StoreTransaction) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    let committed: SqlTransaction | undefined;
    const tries: SqlTransaction[] = [];
    const result = await this.#driver
      .transaction(async (session) => {
        const tx = new SqlTransaction(session, this.#driver, this.#atHead);
        tries.push(tx);
        const value = await fn(tx);
        await tx.beforeCommit();
        committed = tx;
        return value;
      })
      .finally(() => {
        // After COMMIT (or ROLLBACK): until then the head stays locked.
        for (const tx of tries) tx.leaveHeads();
      });
    if (committed && committed.queued.length > 0) {
      const chaining = this.#chainAfterCommit(committed.queued);
      if (!options.chainInBackground) await chaining;
      else {
        // The caller goes on: its events are committed in the queue, and this pass (or whoever
        // takes the head first) chains them. This store's reads and close() wait for it.
        this.#chaining.add(chaining);
        void chaining.then(() => this.#chaining.delete(chaining));
      }
    }
    return result;
  }

  /**
   * Chains what a committed transaction queued, and fills in the events it returned. Another
   * transaction may chain them first (it drains the queue when it takes the head): then they are
   * read back. If chaining fails here the events stay queued, committed, for the next transaction
   * that takes the head or `chainQueued`; the caller's commit stands either way.
   */
  async #chainAfterCommit(queued: readonly Queued[]): Promise<void> {
    for (const q of queued) this.#waiting.set(q.event.id, q.event);
    try {
      const byTenant = new Map<string, Queued[]>();
      for (const q of queued) byTenant.set(q.event.tenant, [...(byTenant.get(q.event.tenant) ?? []), q]);
      for (const [tenant, mine] of byTenant) {
        const unchained = () => mine.filter((q) => q.event.seq === 0);
        // A pass already running may have read the queue after this commit: wait for it first.
        await this.#passes.get(tenant)?.running?.catch(() => undefined);
        if (unchained().length > 0) await this.#pass(tenant, mine[0]!.chainer);
        const missing = unchained();
        if (missing.length === 0) continue;
        const rows = await this.#driver.read((session) =>
          session.all(
            sql`SELECT * FROM countersign_audit_events WHERE tenant = ${tenant} AND proposal_id IN (${sql.list([...new Set(missing.map((q) => q.event.proposalId))])}) AND id IN (${sql.list(missing.map((q) => q.event.id))})`,
          ),
        );
        for (const row of rows) fillIn(this.#waiting.get(String(row['id'])), auditFromRow(row));
      }
    } catch {
      // Committed and queued: chained later (see above). Nothing the caller did is undone.
    } finally {
      for (const q of queued) this.#waiting.delete(q.event.id);
    }
  }

  /**
   * A chaining pass for a tenant, shared by this store's callers: while one runs, later callers
   * wait for the next (the running one may have read the queue before their commit), and every
   * caller arriving meanwhile joins that same next pass. Under contention, one pass per batch.
   */
  #pass(tenant: string, chainer: AuditChainer): Promise<Map<string, AuditEvent>> {
    let slot = this.#passes.get(tenant);
    if (slot === undefined) {
      slot = { running: undefined, next: undefined };
      this.#passes.set(tenant, slot);
    }
    const s = slot;
    if (s.next) return s.next;
    const run = () => {
      const pass = this.#chainTenant(tenant, chainer);
      s.running = pass;
      const done = () => {
        if (s.running === pass) s.running = undefined;
        if (!s.running && !s.next) this.#passes.delete(tenant);
      };
      pass.then(done, done);
      return pass;
    };
    if (!s.running) return run();
    s.next = s.running
      .catch(() => undefined)
      .then(() => {
        s.next = undefined;
        return run();
      });
    return s.next;
  }

  /** One chaining transaction: locks the tenant's head (waiting for it) and chains its queue. */
  async #chainTenant(tenant: string, chainer: AuditChainer): Promise<Map<string, AuditEvent>> {
    this.#atHead.set(tenant, (this.#atHead.get(tenant) ?? 0) + 1);
    const chained = await this.#driver
      .transaction(async (session) => {
        const tx = new SqlTransaction(session, this.#driver, undefined);
        const chained = await tx.takeHeadAndDrain(tenant, chainer, 'pass');
        await tx.beforeCommit();
        return chained;
      })
      .finally(() => leaveHead(this.#atHead, tenant));
    // Committed: the events this store's callers wait for are theirs now.
    for (const [id, event] of chained) fillIn(this.#waiting.get(id), event);
    return chained;
  }

  async chainQueued(chainer: AuditChainer, options: { readonly tenant?: string } = {}): Promise<number> {
    const tenants =
      options.tenant !== undefined
        ? [options.tenant]
        : (
            await this.#driver.read((session) =>
              session.all(sql`SELECT DISTINCT tenant FROM countersign_audit_queue ORDER BY tenant`),
            )
          ).map((r) => String(r['tenant']));
    let count = 0;
    for (const tenant of tenants) {
      try {
        count += (await this.#chainTenant(tenant, chainer)).size;
      } catch (error) {
        // The tenant's next place holds an event the engine did not write: its queue waits, like
        // a queued row the key did not seal, until an operator repairs the chain.
        if (!(error instanceof CorruptAuditChainError)) throw error;
      }
    }
    return count;
  }

  async read<T>(fn: (reader: StoreReader) => Promise<T>): Promise<T> {
    // Reads see this store's own writes chained: the chaining its commits started ends first
    // (before a connection is taken, which a pass may need). Not for longer than a bound, though:
    // a pass waits for the head, which another process may hold, and a read must not wait with it.
    if (this.#chaining.size > 0) await settled([...this.#chaining], CHAINING_WAIT_MS);
    return this.#driver.read((session) => fn(new SqlTransaction(session, this.#driver, undefined)));
  }

  async close(): Promise<void> {
    while (this.#chaining.size > 0) await Promise.all(this.#chaining);
    return this.#driver.close();
  }
}

const proposalOf = (row: Record<string, unknown>) => fromRow<ProposalRecord>(PROPOSAL_COLUMNS, row);
const attemptOf = (row: Record<string, unknown>) => fromRow<AttemptRecord>(ATTEMPT_COLUMNS, row);
const grantOf = (row: Record<string, unknown>) => fromRow<GrantRecord>(GRANT_COLUMNS, row);
const approvalOf = (row: Record<string, unknown>) => fromRow<ApprovalRecord>(APPROVAL_COLUMNS, row);
const headOf = (row: Record<string, unknown> | undefined): ChainHead | undefined =>
  row && Number(row['seq']) > 0
    ? { seq: Number(row['seq']), chainHash: String(row['chain_hash']) }
    : undefined;

/** An `UPDATE` of one patch shape: its statement text parts and the columns it sets. */
interface UpdateShape {
  readonly strings: readonly string[];
  readonly columns: readonly string[];
}
// Built once per table, set of fields and conditions (a handful in all): the same strings array
// each time also lets the `sql` renderer reuse its compiled text.
const UPDATE_SHAPES = new Map<string, UpdateShape>();

/**
 * `UPDATE table SET column = value, … WHERE condition value AND …` for the fields a patch sets
 * (undefined fields are left alone). `conditions` are text ending where their value goes
 * (`'tenant = '`); `values` are the patch's values, in the shape's column order.
 */
function updateOf(
  table: string,
  fieldColumns: readonly (readonly [string, string])[],
  patch: object,
  conditions: readonly string[],
): { shape: UpdateShape; values: unknown[] } {
  const fields: string[] = [];
  const values: unknown[] = [];
  let key = `${table} ${conditions.join()} SET`;
  const given = patch as Record<string, unknown>;
  for (const field in given) {
    const value = given[field];
    if (value === undefined) continue;
    fields.push(field);
    values.push(value);
    key += ` ${field}`;
  }
  if (fields.length === 0) throw new Error(`update of ${table}: empty patch`);
  let shape = UPDATE_SHAPES.get(key);
  if (shape === undefined) {
    const columns = fields.map((field) => columnOf(fieldColumns, field));
    const strings = [
      `UPDATE ${table} SET ${columns[0]} = `,
      ...columns.slice(1).map((column) => `, ${column} = `),
      ...conditions.map((condition, i) => `${i === 0 ? ' WHERE ' : ' AND '}${condition}`),
      '',
    ];
    shape = { strings, columns };
    UPDATE_SHAPES.set(key, shape);
  }
  return { shape, values };
}

/** Resolves once every one of `promises` has (they never reject), or after `ms`, whichever is first. */
async function settled(promises: readonly Promise<void>[], ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.all(promises),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/** One INSERT of chained events, in order, that skips a place already taken (see ON_TAKEN_PLACE). */
function insertEventsSql(events: readonly AuditEvent[]): SqlQuery {
  const values = events.map((e) => {
    const row = auditRow(e);
    assertStorable('countersign_audit_events', AUDIT_COLS, row);
    return sql`(${sql.list(row)})`;
  });
  return sql`INSERT INTO countersign_audit_events (${sql.raw(AUDIT_COLS.join(', '))}) VALUES ${sql.join(values, ', ')}${sql.raw(ON_TAKEN_PLACE)}`;
}

/** A `WITH` member that moves a tenant's head row (where rows lock: written with the events it ends). */
function headUpdateSql(tenant: string, head: ChainHead): SqlQuery {
  return sql`head AS (UPDATE countersign_audit_heads SET seq = ${head.seq}, chain_hash = ${head.chainHash} WHERE tenant = ${tenant})`;
}

/** Counts one holder or waiter less at a tenant's head. */
function leaveHead(atHead: Map<string, number>, tenant: string): void {
  const left = (atHead.get(tenant) ?? 1) - 1;
  if (left > 0) atHead.set(tenant, left);
  else atHead.delete(tenant);
}

/** Completes an event returned unchained with what its chaining gave it. */
function fillIn(placeholder: AuditEvent | undefined, chained: AuditEvent): void {
  if (placeholder === undefined || placeholder.seq !== 0) return;
  Object.assign(placeholder, {
    seq: chained.seq,
    leafHash: chained.leafHash,
    chainHash: chained.chainHash,
    seal: chained.seal,
  });
}

/** An event a transaction queued (returned to its caller unchained) and how to chain it. */
interface Queued {
  readonly event: AuditEvent;
  readonly chainer: AuditChainer;
}

const PROPOSAL_WHERE = ['tenant = ', 'id = ', 'status = '];
const PROPOSAL_AT_ATTEMPT_WHERE = [...PROPOSAL_WHERE, 'current_attempt = '];
const ATTEMPT_WHERE = ['tenant = ', 'id = ', 'status = '];
const ATTEMPT_LEASE_WHERE = [...ATTEMPT_WHERE, 'lease_until < '];

/** One store transaction (or read) on one driver session. */
class SqlTransaction implements StoreTransaction {
  readonly local: LocalTransaction;
  readonly #s: SqlSession;
  readonly #rowLocks: boolean;
  readonly #preview: SqlDriver['preview'];
  // Chain heads this transaction has read (null: none yet) or advanced; written before commit.
  readonly #heads = new Map<string, ChainHead | null>();
  readonly #advanced = new Set<string>();
  // Where rows lock: events appended while this transaction does not hold the tenant's head, by
  // tenant, chained or queued just before COMMIT (see appendAudit).
  readonly #deferred = new Map<string, (Queued & { readonly draft: QueuedAuditEvent })[]>();
  readonly #atHead: Map<string, number> | undefined;
  readonly #entered: string[] = [];
  /** Events this transaction queued, to chain after it commits. */
  readonly queued: Queued[] = [];
  // Queue rows not yet written: one INSERT for all of them just before COMMIT (a round trip per
  // event less on a claim). Nothing in the transaction reads its own queued rows.
  readonly #unwritten: (readonly unknown[])[] = [];
  // Proposals whose tenant and requester counters are counted just before COMMIT: every proposal
  // of a tenant in the same second updates the same counter row, and where rows lock (PostgreSQL)
  // it stays locked from that update to COMMIT, so the update comes last.
  readonly #uncounted: ProposalRecord[] = [];

  constructor(session: SqlSession, driver: SqlDriver, atHead: Map<string, number> | undefined) {
    this.#s = session;
    this.#atHead = atHead;
    this.#rowLocks = driver.capabilities.rowLocks;
    this.#preview = driver.preview;
    this.local = {
      run: async (query, params = []) => ({
        changes: (typeof query === 'string'
          ? await session.native(query, params, 'changes')
          : await session.run(query)
        ).changes,
      }),
      all: async (query, params = []) =>
        typeof query === 'string' ? (await session.native(query, params, 'rows')).rows : session.all(query),
    };
  }

  // No stored key holds a NUL or a lone surrogate (every write refuses them): a lookup by such a
  // key matches nothing, instead of failing the request where the database refuses the text.
  #unmatchable(...keys: readonly (string | undefined)[]): boolean {
    return keys.some((k) => k !== undefined && !isStorableText(k));
  }

  #storable(table: string, columns: readonly string[], values: readonly unknown[]): void {
    assertStorable(table, columns, values);
  }

  async #one(query: SqlQuery): Promise<Record<string, unknown> | undefined> {
    return (await this.#s.all(query))[0];
  }

  async insertProposal(record: ProposalRecord): Promise<void> {
    const row = toRow(PROPOSAL_COLUMNS, record);
    this.#storable('countersign_proposals', PROPOSAL_COLS, row);
    await this.#s.run(INSERT_PROPOSAL(row));
    // The rate counters commit with the proposal they count (see countProposals), written last.
    this.#uncounted.push(record);
  }

  async getProposal(tenant: string, id: string): Promise<ProposalRecord | undefined> {
    if (this.#unmatchable(tenant, id)) return undefined;
    const row = await this.#one(
      sql`SELECT * FROM countersign_proposals WHERE tenant = ${tenant} AND id = ${id}`,
    );
    return row ? proposalOf(row) : undefined;
  }

  async listProposals(tenant: string, query: ProposalQuery): Promise<ProposalRecord[]> {
    if (this.#unmatchable(tenant, query.search, query.operation, query.requestedBy, query.runId)) return [];
    return (await this.#s.all(listProposalsSql(tenant, query, this.#preview))).map(proposalOf);
  }

  async countMatchingProposals(tenant: string, filter: ProposalFilter): Promise<number> {
    if (this.#unmatchable(tenant, filter.search, filter.operation, filter.requestedBy, filter.runId))
      return 0;
    return Number((await this.#one(countMatchingSql(tenant, filter, this.#preview)))?.['n'] ?? 0);
  }

  async updateProposal(
    tenant: string,
    id: string,
    expected: { readonly status: ProposalRecord['status']; readonly attempt?: number },
    patch: ProposalPatch,
  ): Promise<boolean> {
    // See the interface: a pending row is held to attempt 0 (the engine never re-pends a proposal).
    const attempt = expected.attempt ?? (expected.status === 'pending' ? 0 : undefined);
    const atAttempt = attempt !== undefined;
    const { shape, values } = updateOf(
      'countersign_proposals',
      PROPOSAL_COLUMNS,
      patch,
      atAttempt ? PROPOSAL_AT_ATTEMPT_WHERE : PROPOSAL_WHERE,
    );
    this.#storable('countersign_proposals', shape.columns, values);
    values.push(tenant, id, expected.status);
    if (atAttempt) values.push(attempt);
    const { changes } = await this.#s.run(new SqlQuery(shape.strings, values));
    return changes === 1;
  }

  async countProposals(tenant: string, query: ProposalCountQuery) {
    return proposalCountsOf(await this.#one(countProposalsSql(tenant, query)), query);
  }

  async listExpired(now: number, limit: number): Promise<{ tenant: string; id: string }[]> {
    const rows = await this.#s.all(
      sql`SELECT tenant, id FROM countersign_proposals WHERE status = 'pending' AND expires_at <= ${now} ORDER BY expires_at LIMIT ${limit}`,
    );
    return rows.map((r) => ({ tenant: String(r['tenant']), id: String(r['id']) }));
  }

  async insertAttempt(record: AttemptRecord): Promise<void> {
    const row = toRow(ATTEMPT_COLUMNS, record);
    this.#storable('countersign_attempts', ATTEMPT_COLS, row);
    await this.#s.run(INSERT_ATTEMPT(row));
  }

  async getAttempt(tenant: string, id: string): Promise<AttemptRecord | undefined> {
    if (this.#unmatchable(tenant, id)) return undefined;
    const row = await this.#one(
      sql`SELECT * FROM countersign_attempts WHERE tenant = ${tenant} AND id = ${id}`,
    );
    return row ? attemptOf(row) : undefined;
  }

  async listAttempts(tenant: string, proposalId: string): Promise<AttemptRecord[]> {
    if (this.#unmatchable(tenant, proposalId)) return [];
    const rows = await this.#s.all(
      sql`SELECT * FROM countersign_attempts WHERE tenant = ${tenant} AND proposal_id = ${proposalId} ORDER BY number`,
    );
    return rows.map(attemptOf);
  }

  async updateAttempt(
    tenant: string,
    id: string,
    expectedStatus: AttemptStatus,
    patch: AttemptPatch,
    expected: { readonly leaseBefore?: number } = {},
  ): Promise<boolean> {
    const leased = expected.leaseBefore !== undefined;
    const { shape, values } = updateOf(
      'countersign_attempts',
      ATTEMPT_COLUMNS,
      patch,
      leased ? ATTEMPT_LEASE_WHERE : ATTEMPT_WHERE,
    );
    this.#storable('countersign_attempts', shape.columns, values);
    values.push(tenant, id, expectedStatus);
    if (leased) values.push(expected.leaseBefore);
    const { changes } = await this.#s.run(new SqlQuery(shape.strings, values));
    return changes === 1;
  }

  async listExpiredLeases(now: number, limit: number): Promise<AttemptRecord[]> {
    const rows = await this.#s.all(
      sql`SELECT * FROM countersign_attempts WHERE status = 'executing' AND lease_until < ${now} ORDER BY lease_until LIMIT ${limit}`,
    );
    return rows.map(attemptOf);
  }

  async listReconciliationDue(now: number, limit: number): Promise<AttemptRecord[]> {
    const rows = await this.#s.all(
      sql`SELECT * FROM countersign_attempts WHERE status = 'needs_reconciliation' AND lease_until < ${now} ORDER BY lease_until LIMIT ${limit}`,
    );
    return rows.map(attemptOf);
  }

  async insertGrant(record: GrantRecord): Promise<void> {
    const row = toRow(GRANT_COLUMNS, record);
    this.#storable('countersign_grants', GRANT_COLS, row);
    await this.#s.run(GRANT_SQL.insert(row));
  }

  async getGrant(tenant: string, id: string): Promise<GrantRecord | undefined> {
    if (this.#unmatchable(tenant, id)) return undefined;
    const row = await this.#one(GRANT_SQL.get(tenant, id));
    return row ? grantOf(row) : undefined;
  }

  async listGrants(tenant: string, query: GrantQuery) {
    const { subject, before, limit } = query;
    if (this.#unmatchable(tenant, subject, before?.id)) return [];
    const rows = await this.#s.all(
      subject === undefined
        ? before === undefined
          ? GRANT_SQL.list(tenant, limit)
          : GRANT_SQL.listBefore(tenant, before, limit)
        : before === undefined
          ? GRANT_SQL.listBySubject(tenant, subject, limit)
          : GRANT_SQL.listBySubjectBefore(tenant, subject, before, limit),
    );
    return rows.map(grantOf);
  }

  async grantHistory(tenant: string, id: string): Promise<GrantHistory | undefined> {
    if (this.#unmatchable(tenant, id)) return undefined;
    // Locked first, read after in a statement of its own: its snapshot then holds every spend and
    // revocation committed before the lock, and no later one can commit before this transaction.
    if (this.#rowLocks) await this.#s.all(GRANT_SQL.lock(tenant, id));
    const row = await this.#one(GRANT_SQL.history(tenant, id));
    if (!row) return undefined;
    return {
      grant: grantOf(row),
      approvals: Number(row['audited_approvals']),
      revoked: Number(row['audited_revoked']) === 1,
    };
  }

  async spendGrant(
    tenant: string,
    id: string,
    spend: { readonly amount: number; readonly now: number; readonly sealed?: GrantStateSeal },
  ) {
    const { sealed } = spend;
    const query =
      sealed === undefined
        ? GRANT_SQL.spend(tenant, id, spend)
        : GRANT_SQL.spendSealed(tenant, id, { amount: spend.amount, now: spend.now, sealed });
    return (await this.#s.run(query)).changes === 1;
  }

  async revokeGrant(
    tenant: string,
    id: string,
    revoke: { readonly by: string; readonly now: number; readonly sealed?: GrantStateSeal },
  ) {
    this.#storable('countersign_grants', ['revoked_by'], [revoke.by]);
    const { sealed } = revoke;
    const query =
      sealed === undefined
        ? GRANT_SQL.revoke(tenant, id, revoke)
        : GRANT_SQL.revokeSealed(tenant, id, { by: revoke.by, now: revoke.now, sealed });
    return (await this.#s.run(query)).changes === 1;
  }

  async insertApproval(record: ApprovalRecord): Promise<boolean> {
    const row = toRow(APPROVAL_COLUMNS, record);
    this.#storable('countersign_approvals', APPROVAL_COLS, row);
    return (await this.#s.run(GRANT_SQL.insertApproval(row))).changes === 1;
  }

  async listApprovals(tenant: string, proposalId: string): Promise<ApprovalRecord[]> {
    if (this.#unmatchable(tenant, proposalId)) return [];
    return (await this.#s.all(GRANT_SQL.listApprovals(tenant, proposalId))).map(approvalOf);
  }

  /**
   * Takes a tenant's chain head for this transaction and chains what waits in its queue. Where the
   * whole database is locked for writing (SQLite) the head is read, and the queue (empty unless
   * written by hand) drained only by an explicit pass (`drain`). Where rows lock (PostgreSQL), this
   * is the chaining pass: the head row is locked (after whoever holds it) until COMMIT, and every
   * queued event committed by then is chained, in queue order, with a few statements for the batch.
   */
  async takeHeadAndDrain(
    tenant: string,
    chainer: AuditChainer,
    mode: 'read' | 'drain' | 'pass',
  ): Promise<Map<string, AuditEvent>> {
    const chained = new Map<string, AuditEvent>();
    if (!this.#rowLocks) {
      const row = await this.#one(
        sql`SELECT seq, chain_hash FROM countersign_audit_heads WHERE tenant = ${tenant}`,
      );
      this.#heads.set(tenant, headOf(row) ?? null);
      if (mode === 'read') return chained;
    } else {
      // The head, locked, and whether anything waits in the queue: one round trip. A pass, undone
      // by a crash, leaves its events queued (their own transactions were durable) for the next
      // pass, so it commits without waiting for its WAL flush while it holds the head.
      const lock = () =>
        this.#one(
          mode === 'pass'
            ? sql`SELECT set_config('synchronous_commit', 'off', true) AS async, seq, chain_hash, EXISTS (SELECT 1 FROM countersign_audit_queue q WHERE q.tenant = ${tenant}) AS waiting FROM countersign_audit_heads WHERE tenant = ${tenant} FOR UPDATE`
            : sql`SELECT seq, chain_hash, EXISTS (SELECT 1 FROM countersign_audit_queue q WHERE q.tenant = ${tenant}) AS waiting FROM countersign_audit_heads WHERE tenant = ${tenant} FOR UPDATE`,
        );
      let row = await lock();
      if (row === undefined) {
        // The tenant's first pass creates its head (a concurrent creator waits, then locks it).
        const { changes } = await this.#s.run(
          sql`INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (${tenant}, 0, '') ON CONFLICT (tenant) DO NOTHING`,
        );
        row = changes === 1 ? { seq: 0, chain_hash: '', waiting: true } : await lock();
      }
      this.#heads.set(tenant, headOf(row) ?? null);
      if (!row?.['waiting']) return chained;
    }
    // Each read is a fresh snapshot of what waits, oldest first, so an event that committed late
    // with an older place in the queue is still chained before any that depended on it. A pass
    // reads again while it finds events (at most PASS_READS times): those that commit while it
    // runs are chained by it, and their callers need not wait for another pass. The first read is
    // not folded into the lock's statement: under READ COMMITTED that statement's snapshot is taken
    // before it waits for the lock, so it would still see rows the pass it waited for has chained.
    const refused = new Set<number>();
    // What waits, oldest first, each row marked when its id is already chained (a replayed copy).
    const queueRead = (except: SqlQuery = sql.empty) =>
      sql`SELECT q.*, EXISTS (SELECT 1 FROM countersign_audit_events e WHERE e.tenant = q.tenant AND e.id = q.id) AS replayed FROM countersign_audit_queue q WHERE q.tenant = ${tenant}${except} ORDER BY q.n LIMIT ${CHAIN_BATCH + refused.size}`;
    let rows = await this.#s.all(queueRead());
    for (let read = 1; ; read++) {
      const taken: number[] = [];
      const events: AuditEvent[] = [];
      for (const row of rows) {
        const { n, event, seal } = queuedFromRow(row);
        if (refused.has(n)) continue;
        // A row the key did not seal was written by hand: it is never chained (so never sealed by
        // the server) and stays queued, where `verifyAudit` names it.
        // Nor is a copy of a row already chained (a genuine seal, inserted again after its pass).
        if (row['replayed'] || !chainer.acceptsQueued(event, seal)) {
          refused.add(n);
          continue;
        }
        const linked = chainer.link(this.#heads.get(tenant) ?? undefined, event);
        this.#heads.set(tenant, { seq: linked.seq, chainHash: linked.chainHash });
        taken.push(n);
        events.push(linked);
        chained.set(linked.id, linked);
      }
      if (events.length === 0) break;
      const again = events.length >= CHAIN_BATCH || (mode === 'pass' && read < PASS_READS);
      // One statement each for the batch: a pass costs the same few round trips for 1 or 500.
      const insert = insertEventsSql(events);
      // Fewer rows written than linked: a place the batch needed was taken (see ON_TAKEN_PLACE).
      // Thrown, the transaction rolls back: the batch stays queued, chained on top of nothing.
      const refuseShort = (written: number) => {
        if (written !== events.length) throw new CorruptAuditChainError(tenant, events[0]!.seq);
      };
      const dequeue = sql`DELETE FROM countersign_audit_queue WHERE n IN (${sql.list(taken)})`;
      if (this.#rowLocks) {
        // PostgreSQL: the batch, the dequeue and the new head in one statement (one round trip),
        // which also reads the queue again when the pass goes on. Its snapshot is taken after this
        // transaction took the head, so it holds every row committed since; the rows it dequeues
        // are still in that snapshot, so they are left out by number.
        const head = this.#heads.get(tenant)!;
        const write = sql`taken AS (${dequeue} RETURNING n), ${headUpdateSql(tenant, head)}`;
        if (!again) {
          refuseShort((await this.#s.run(sql`WITH ${write} ${insert}`)).changes);
          break;
        }
        // The count of rows written rides on every row read back, and on one row of nulls when the
        // queue is empty, so the check costs no statement of its own.
        const read = await this.#s.all(
          sql`WITH ${write}, chained AS (${insert} RETURNING 1), waiting AS (${queueRead(sql` AND q.n NOT IN (SELECT n FROM taken)`)}) SELECT c.written, w.* FROM (SELECT count(*) AS written FROM chained) c LEFT JOIN waiting w ON true ORDER BY w.n`,
        );
        refuseShort(Number(read[0]?.['written']));
        rows = read.filter((row) => row['n'] !== null);
      } else {
        refuseShort((await this.#s.run(insert)).changes);
        await this.#s.run(dequeue);
        this.#advanced.add(tenant);
        if (!again) break;
        rows = await this.#s.all(queueRead());
      }
    }
    return chained;
  }

  /**
   * Takes the tenant's head for this transaction's last statement and COMMIT if it is free
   * (`SKIP LOCKED`) and none of this store's transactions or passes is at it, or says to queue:
   * queuing costs the caller one statement and no wait, while the head taken costs two, and
   * waiting for it more. What waits in the queue is chained first, so the chain keeps the order
   * things happened in.
   */
  async #enterHead(tenant: string, chainer: AuditChainer): Promise<boolean> {
    if (this.#atHead === undefined || this.#atHead.has(tenant)) return false;
    this.#atHead.set(tenant, 1);
    this.#entered.push(tenant);
    const row = await this.#one(
      sql`SELECT seq, chain_hash, EXISTS (SELECT 1 FROM countersign_audit_queue q WHERE q.tenant = ${tenant}) AS waiting FROM countersign_audit_heads WHERE tenant = ${tenant} FOR UPDATE SKIP LOCKED`,
    );
    if (row === undefined) {
      // Held elsewhere, or the tenant's first event, whose head the chaining pass creates.
      this.#entered.pop();
      leaveHead(this.#atHead, tenant);
      return false;
    }
    if (row['waiting']) await this.takeHeadAndDrain(tenant, chainer, 'drain');
    else this.#heads.set(tenant, headOf(row) ?? null);
    return true;
  }

  /** Ends this transaction's part at its tenants' heads (at commit or rollback). */
  leaveHeads(): void {
    if (this.#atHead === undefined) return;
    for (const tenant of this.#entered.splice(0)) leaveHead(this.#atHead, tenant);
  }

  async #chainNow(tenant: string, draft: QueuedAuditEvent, chainer: AuditChainer): Promise<AuditEvent> {
    const event = chainer.link(this.#heads.get(tenant) ?? undefined, draft);
    const row = auditRow(event);
    this.#storable('countersign_audit_events', AUDIT_COLS, row);
    // Thrown, the transaction rolls back: nothing it did is half-applied (see ON_TAKEN_PLACE).
    if ((await this.#s.run(INSERT_AUDIT(row))).changes !== 1)
      throw new CorruptAuditChainError(tenant, event.seq);
    this.#heads.set(tenant, { seq: event.seq, chainHash: event.chainHash });
    this.#advanced.add(tenant);
    return event;
  }

  async appendAudit(tenant: string, draft: QueuedAuditEvent, chainer: AuditChainer): Promise<AuditEvent> {
    if (draft.tenant !== tenant)
      throw new Error(`appendAudit: an event of ${draft.tenant} built for the chain of ${tenant}`);
    if (!this.#rowLocks) {
      if (!this.#heads.has(tenant)) await this.takeHeadAndDrain(tenant, chainer, 'read');
      return this.#chainNow(tenant, draft, chainer);
    }
    // Where rows lock, the head is taken only at the end (see beforeCommit): held from the first
    // append to COMMIT, it would make every other transaction of the tenant wait on this one.
    const event: AuditEvent = { ...draft, seq: 0, leafHash: '', chainHash: '', seal: null };
    const deferred = this.#deferred.get(tenant);
    if (deferred) deferred.push({ draft, event, chainer });
    else this.#deferred.set(tenant, [{ draft, event, chainer }]);
    return event;
  }

  /**
   * Just before COMMIT, for each tenant this transaction appended to where rows lock: with the
   * tenant's head free (`SKIP LOCKED`), its events are chained now, written with the new head in
   * one statement, and the head is held only for that statement and COMMIT. With the head held
   * elsewhere, they are queued with their seals, to be chained by a pass after this commit.
   */
  async #chainOrQueue(): Promise<void> {
    for (const [tenant, items] of this.#deferred) {
      const chainer = items[0]!.chainer;
      if (!(await this.#enterHead(tenant, chainer))) {
        for (const item of items) {
          const row = queueRow(item.draft, item.chainer.queueSeal(item.draft));
          this.#storable('countersign_audit_queue', QUEUE_COLUMNS, row);
          this.#unwritten.push(row);
          this.queued.push({ event: item.event, chainer: item.chainer });
        }
        continue;
      }
      const events = items.map((item) => {
        const linked = item.chainer.link(this.#heads.get(tenant) ?? undefined, item.draft);
        this.#heads.set(tenant, { seq: linked.seq, chainHash: linked.chainHash });
        fillIn(item.event, linked);
        return linked;
      });
      const head = this.#heads.get(tenant)!;
      // A drain in #enterHead may have advanced the head: this statement writes the final one.
      this.#advanced.delete(tenant);
      const { changes } = await this.#s.run(
        sql`WITH ${headUpdateSql(tenant, head)} ${insertEventsSql(events)}`,
      );
      // Thrown, the transaction rolls back (see ON_TAKEN_PLACE).
      if (changes !== events.length) throw new CorruptAuditChainError(tenant, events[0]!.seq);
    }
    this.#deferred.clear();
  }

  /**
   * Writes what waited for the commit, just before it: the queued audit events (one statement),
   * the chain heads this transaction advanced, once each, and the rate counters of the proposals
   * it inserted.
   */
  async beforeCommit(): Promise<void> {
    if (this.#deferred.size > 0) await this.#chainOrQueue();
    const rows = this.#unwritten.splice(0);
    const queued =
      rows.length === 0
        ? []
        : rows.length === 1
          ? await this.#s.all(INSERT_QUEUED(rows[0]!))
          : await this.#s.all(
              sql`INSERT INTO countersign_audit_queue (${sql.raw(QUEUE_COLUMNS.join(', '))}) VALUES ${sql.join(
                rows.map((row) => sql`(${sql.list(row)})`),
                ', ',
              )}${sql.raw(QUEUED_PAST_HEAD)}`,
            );
    for (const row of queued)
      if (row['foreign_seq'] != null)
        throw new CorruptAuditChainError(String(row['tenant']), Number(row['foreign_seq']));
    for (const tenant of this.#advanced) {
      const head = this.#heads.get(tenant)!;
      await this.#s.run(
        sql`INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (${tenant}, ${head.seq}, ${head.chainHash}) ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, chain_hash = excluded.chain_hash`,
      );
    }
    for (const record of this.#uncounted.splice(0)) {
      const counted = await this.#s.all(countRateSql(record.tenant, record.requestedBy, record.createdAt));
      if (opensRateSecond(counted)) await this.#s.run(pruneRatesSql(record.tenant, record.createdAt));
    }
  }

  async listAudit(tenant: string, query: AuditQuery) {
    if (this.#unmatchable(tenant, query.proposalId)) return [];
    return (await this.#s.all(auditPageSql(tenant, query))).map(auditFromRow);
  }

  async auditHead(tenant: string): Promise<ChainHead | undefined> {
    const known = this.#heads.get(tenant);
    if (known !== undefined) return known ?? undefined;
    return headOf(
      await this.#one(sql`SELECT seq, chain_hash FROM countersign_audit_heads WHERE tenant = ${tenant}`),
    );
  }

  async listQueuedAudit(tenant: string, limit: number) {
    if (this.#unmatchable(tenant)) return [];
    const rows = await this.#s.all(
      sql`SELECT * FROM countersign_audit_queue WHERE tenant = ${tenant} ORDER BY n LIMIT ${limit}`,
    );
    return rows.map((row) => {
      const { event, seal } = queuedFromRow(row);
      return { event, seal };
    });
  }

  async auditTenants(): Promise<string[]> {
    const rows = await this.#s.all(
      sql`SELECT DISTINCT tenant FROM countersign_audit_events UNION SELECT tenant FROM countersign_audit_queue ORDER BY tenant`,
    );
    return rows.map((r) => String(r['tenant']));
  }
}
