import type { AuditEvent, ChainHead } from '../../audit/event.js';
import type { LocalTransaction } from '../../operation/define-operation.js';
import { assertStorable, isStorableText } from '../unstorable-value.js';
import type {
  ApprovalRecord,
  AttemptPatch,
  AttemptRecord,
  AttemptStatus,
  GrantRecord,
  GroupRecord,
  ProposalRouteRecord,
  RouteRecord,
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
import { groupOf, proposalRouteOf, ROUTING_SQL, routeOf } from '../sql-routing.js';
import { countMatchingSql, listProposalsSql, pendingDueSql } from '../sql-proposals.js';
import type {
  AuditHeadState,
  AuditQuery,
  ChainedBatch,
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
  QueuedAuditEntry,
  QueuedAuditRow,
  StoreTransaction,
} from '../store.js';
import type { SqlDriver, SqlSession } from './driver.js';
import { CorruptAuditChainError } from '../store-errors.js';
import { SqlQuery, sql, valuesStatement } from '../../sql/sql.js';

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
const ROUTE_TEXT_COLUMNS = [
  'tenant',
  'id',
  'name',
  'operation',
  'resource',
  'amount_field',
  'group_name',
  'channel',
  'escalation_group',
  'escalation_channel',
];
const insertInto = (table: string, columns: readonly string[]) =>
  valuesStatement(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (`, columns.length, ')');
const INSERT_PROPOSAL = insertInto('countersign_proposals', PROPOSAL_COLS);
const INSERT_ATTEMPT = insertInto('countersign_attempts', ATTEMPT_COLS);
// An event goes where its tenant's head says the chain ends. A row already there was not written
// by the engine (a database writer's): the insert skips it, so the append sees 0 rows written and
// refuses (CorruptAuditChainError) without a failed statement, which would end a PostgreSQL
// transaction. Only the place conflicts this way: a second event with an id the chain holds is a bug.
const ON_TAKEN_PLACE = ' ON CONFLICT (tenant, seq) DO NOTHING';
// Queued rows come back with the first event of their tenant past its committed head, if any: the
// engine writes an event and its head in one commit, so such an event is a database writer's, and
// the queuing transaction is refused before it commits, like one that chains.
const QUEUED_PAST_HEAD = ` RETURNING tenant, (SELECT e.seq FROM countersign_audit_events e WHERE e.tenant = countersign_audit_queue.tenant AND e.seq > COALESCE((SELECT h.seq FROM countersign_audit_heads h WHERE h.tenant = countersign_audit_queue.tenant), 0) ORDER BY e.seq LIMIT 1) AS foreign_seq`;
// How long a read waits for unfinished work (see finishBeforeReads): a pass may wait for a head
// another process holds, and a read must not wait with it.
const UNFINISHED_WAIT_MS = 1_000;
const INSERT_QUEUED = valuesStatement(
  `INSERT INTO countersign_audit_queue (${QUEUE_COLUMNS.join(', ')}) VALUES (`,
  QUEUE_COLUMNS.length,
  `)${QUEUED_PAST_HEAD}`,
);

/**
 * The one SQL store: every statement of the {@link Store} contract written once (the `sql` tag),
 * over a {@link SqlDriver} that runs it on SQLite, PostgreSQL or PGlite. What differs between
 * dialects is asked of the driver's capability flags, never of its name.
 */
export class SqlStore implements Store {
  readonly capabilities: StoreCapabilities;
  readonly #driver: SqlDriver;
  readonly #migrations: readonly SqlMigration[];
  // Work its reads wait for (see finishBeforeReads).
  readonly #unfinished = new Set<Promise<void>>();

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

  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.#driver.transaction(async (session) => {
      const tx = new SqlTransaction(session, this.#driver);
      const value = await fn(tx);
      await tx.beforeCommit();
      return value;
    });
  }

  finishBeforeReads(work: Promise<void>): void {
    this.#unfinished.add(work);
    void work.then(() => this.#unfinished.delete(work));
  }

  async read<T>(fn: (reader: StoreReader) => Promise<T>): Promise<T> {
    // Before a connection is taken, which the unfinished work (a chaining pass) may need.
    if (this.#unfinished.size > 0) await settled([...this.#unfinished], UNFINISHED_WAIT_MS);
    return this.#driver.read((session) => fn(new SqlTransaction(session, this.#driver)));
  }

  async close(): Promise<void> {
    while (this.#unfinished.size > 0) await Promise.all(this.#unfinished);
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

// The text parts of an INSERT of `n` chained events, by `n`: built once per count, so the same
// frozen array comes back and its statement text is compiled once (see `sql`), not spliced
// together from one fragment per row on every append. Batches of up to this many events keep theirs.
const INSERT_EVENTS_KEPT = 64;
const insertEventsStrings = new Map<number, readonly string[]>();

function insertEventsStringsOf(n: number): readonly string[] {
  const known = insertEventsStrings.get(n);
  if (known) return known;
  const strings: string[] = [`INSERT INTO countersign_audit_events (${AUDIT_COLS.join(', ')}) VALUES (`];
  for (let row = 0; row < n; row++) {
    for (let col = 1; col < AUDIT_COLS.length; col++) strings.push(', ');
    strings.push(row === n - 1 ? `)${ON_TAKEN_PLACE}` : '), (');
  }
  const frozen = Object.freeze(strings);
  if (n <= INSERT_EVENTS_KEPT) insertEventsStrings.set(n, frozen);
  return frozen;
}

/** One INSERT of chained events, in order, that skips a place already taken (see ON_TAKEN_PLACE). */
function insertEventsSql(events: readonly AuditEvent[]): SqlQuery {
  const values: unknown[] = [];
  for (const e of events) {
    const row = auditRow(e);
    assertStorable('countersign_audit_events', AUDIT_COLS, row);
    for (const value of row) values.push(value);
  }
  return new SqlQuery(insertEventsStringsOf(events.length), values);
}

/** What waits in a tenant's queue, oldest first, each row marked when its id is already chained (a replayed copy). */
function queueReadSql(tenant: string, limit: number, except: readonly number[]): SqlQuery {
  const left = except.length === 0 ? sql.empty : sql` AND q.n NOT IN (${sql.list(except)})`;
  return sql`SELECT q.*, EXISTS (SELECT 1 FROM countersign_audit_events e WHERE e.tenant = q.tenant AND e.id = q.id) AS replayed FROM countersign_audit_queue q WHERE q.tenant = ${tenant}${left} ORDER BY q.n LIMIT ${limit}`;
}

/** A queue row as the ledger chains it. */
function queueEntryOf(row: Record<string, unknown>): QueuedAuditEntry {
  return { ...queuedFromRow(row), replayed: Boolean(row['replayed']) };
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
  // Proposals whose tenant and requester counters are counted just before COMMIT: every proposal
  // of a tenant in the same second updates the same counter row, and where rows lock (PostgreSQL)
  // it stays locked from that update to COMMIT, so the update comes last.
  readonly #uncounted: ProposalRecord[] = [];

  constructor(session: SqlSession, driver: SqlDriver) {
    this.#s = session;
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
    const rows = await this.#s.all(pendingDueSql({ until: now, limit }));
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

  async listPendingApprovals(tenant: string): Promise<ApprovalRecord[]> {
    return (await this.#s.all(GRANT_SQL.listPendingApprovals(tenant))).map(approvalOf);
  }

  async deleteApproval(tenant: string, proposalId: string, approver: string): Promise<boolean> {
    if (this.#unmatchable(tenant, proposalId)) return false;
    return (await this.#s.run(GRANT_SQL.deleteApproval(tenant, proposalId, approver))).changes === 1;
  }

  async listGroups(tenant: string): Promise<GroupRecord[]> {
    if (this.#unmatchable(tenant)) return [];
    return (await this.#s.all(ROUTING_SQL.listGroups(tenant))).map(groupOf);
  }

  async putGroup(record: GroupRecord): Promise<void> {
    const texts = [record.tenant, record.name, ...record.members];
    this.#storable(
      'countersign_groups',
      texts.map((_, i) => (i < 2 ? ['tenant', 'name'][i]! : 'members_json')),
      texts,
    );
    await this.#s.run(ROUTING_SQL.putGroup(record));
  }

  async deleteGroup(tenant: string, name: string): Promise<boolean> {
    if (this.#unmatchable(tenant, name)) return false;
    return (await this.#s.run(ROUTING_SQL.deleteGroup(tenant, name))).changes === 1;
  }

  async listRoutes(tenant: string): Promise<RouteRecord[]> {
    if (this.#unmatchable(tenant)) return [];
    return (await this.#s.all(ROUTING_SQL.listRoutes(tenant))).map(routeOf);
  }

  async putRoute(record: RouteRecord): Promise<void> {
    const texts = [
      record.tenant,
      record.id,
      record.name,
      record.operation,
      record.resource,
      record.amountField,
      record.group,
      record.channel,
      record.escalationGroup,
      record.escalationChannel,
    ];
    this.#storable('countersign_routes', ROUTE_TEXT_COLUMNS, texts);
    await this.#s.run(ROUTING_SQL.putRoute(record));
  }

  async deleteRoute(tenant: string, id: string): Promise<boolean> {
    if (this.#unmatchable(tenant, id)) return false;
    return (await this.#s.run(ROUTING_SQL.deleteRoute(tenant, id))).changes === 1;
  }

  async insertProposalRoute(record: ProposalRouteRecord): Promise<void> {
    await this.#s.run(ROUTING_SQL.insertProposalRoute(record));
  }

  async listProposalRoutes(tenant: string, proposalIds: readonly string[]): Promise<ProposalRouteRecord[]> {
    const ids = proposalIds.filter((id) => isStorableText(id));
    if (ids.length === 0 || this.#unmatchable(tenant)) return [];
    return (await this.#s.all(ROUTING_SQL.listProposalRoutes(tenant, ids))).map(proposalRouteOf);
  }

  async listEscalationDue(now: number, limit: number): Promise<{ tenant: string; id: string }[]> {
    const rows = await this.#s.all(ROUTING_SQL.listEscalationDue(now, limit));
    return rows.map((r) => ({ tenant: String(r['tenant']), id: String(r['proposal_id']) }));
  }

  async markEscalated(tenant: string, proposalId: string, now: number): Promise<boolean> {
    if (this.#unmatchable(tenant, proposalId)) return false;
    return (await this.#s.run(ROUTING_SQL.markEscalated(tenant, proposalId, now))).changes === 1;
  }

  async listReminderDue(
    now: number,
    until: number,
    limit: number,
  ): Promise<{ tenant: string; id: string }[]> {
    const rows = await this.#s.all(ROUTING_SQL.listReminderDue(now, until, limit));
    return rows.map((r) => ({ tenant: String(r['tenant']), id: String(r['id']) }));
  }

  async insertReminder(tenant: string, proposalId: string, now: number): Promise<boolean> {
    if (this.#unmatchable(tenant, proposalId)) return false;
    return (await this.#s.run(ROUTING_SQL.insertReminder(tenant, proposalId, now))).changes === 1;
  }

  async takeAuditHead(tenant: string, how: 'wait' | 'skip' | 'pass'): Promise<AuditHeadState | undefined> {
    if (!this.#rowLocks) {
      // The whole database is locked for writing: the head is this transaction's already. One
      // template without fragments, so its text is compiled once, not on every append.
      const row = await this.#one(
        sql`SELECT (SELECT seq FROM countersign_audit_heads WHERE tenant = ${tenant}) AS seq, (SELECT chain_hash FROM countersign_audit_heads WHERE tenant = ${tenant}) AS chain_hash, EXISTS (SELECT 1 FROM countersign_audit_queue q WHERE q.tenant = ${tenant}) AS waiting`,
      );
      return { head: headOf(row), waiting: Boolean(row?.['waiting']) };
    }
    const waiting = sql`EXISTS (SELECT 1 FROM countersign_audit_queue q WHERE q.tenant = ${tenant}) AS waiting`;
    if (how === 'skip') {
      // Held elsewhere, or the tenant's first event, whose head a waiting taker creates.
      const row = await this.#one(
        sql`SELECT seq, chain_hash, ${waiting} FROM countersign_audit_heads WHERE tenant = ${tenant} FOR UPDATE SKIP LOCKED`,
      );
      return row && { head: headOf(row), waiting: Boolean(row['waiting']) };
    }
    // A pass, undone by a crash, leaves its events queued (their own transactions were durable),
    // so it commits without waiting for its WAL flush while it holds the head.
    const lock = () =>
      this.#one(
        how === 'pass'
          ? sql`SELECT set_config('synchronous_commit', 'off', true) AS async, seq, chain_hash, ${waiting} FROM countersign_audit_heads WHERE tenant = ${tenant} FOR UPDATE`
          : sql`SELECT seq, chain_hash, ${waiting} FROM countersign_audit_heads WHERE tenant = ${tenant} FOR UPDATE`,
      );
    let row = await lock();
    if (row === undefined) {
      // The tenant's first taker creates its head (a concurrent creator waits, then locks it).
      const { changes } = await this.#s.run(
        sql`INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (${tenant}, 0, '') ON CONFLICT (tenant) DO NOTHING`,
      );
      row = changes === 1 ? { seq: 0, chain_hash: '', waiting: true } : await lock();
    }
    return { head: headOf(row), waiting: Boolean(row?.['waiting']) };
  }

  async readAuditQueue(
    tenant: string,
    limit: number,
    except: readonly number[] = [],
  ): Promise<QueuedAuditEntry[]> {
    return (await this.#s.all(queueReadSql(tenant, limit, except))).map(queueEntryOf);
  }

  async writeChainedAudit(
    tenant: string,
    batch: ChainedBatch,
  ): Promise<{ written: number; next: QueuedAuditEntry[] }> {
    const { events, head, dequeue, readNext } = batch;
    const insert = insertEventsSql(events);
    const taken = dequeue.length === 0 ? undefined : sql.list(dequeue);
    if (!this.#rowLocks) {
      const { changes } = await this.#s.run(insert);
      if (taken) await this.#s.run(sql`DELETE FROM countersign_audit_queue WHERE n IN (${taken})`);
      await this.#s.run(
        sql`INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (${tenant}, ${head.seq}, ${head.chainHash}) ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, chain_hash = excluded.chain_hash`,
      );
      const next = readNext === undefined ? [] : await this.readAuditQueue(tenant, readNext);
      return { written: changes, next };
    }
    // The events, the dequeue and the new head in one statement (one round trip): a batch costs
    // the same for 1 event or 500. The head row exists: this transaction holds its lock.
    const moveHead = sql`head AS (UPDATE countersign_audit_heads SET seq = ${head.seq}, chain_hash = ${head.chainHash} WHERE tenant = ${tenant})`;
    const write = taken
      ? sql`taken AS (DELETE FROM countersign_audit_queue WHERE n IN (${taken}) RETURNING n), ${moveHead}`
      : moveHead;
    if (readNext === undefined)
      return { written: (await this.#s.run(sql`WITH ${write} ${insert}`)).changes, next: [] };
    // Reading the queue again in the same statement: its snapshot is taken after this transaction
    // took the head, so it holds every row committed since; the rows it dequeues are still in that
    // snapshot, so they are left out by number. The count of rows written rides on every row read
    // back, and on one row of nulls when the queue is empty, so it costs no statement of its own.
    const rows = await this.#s.all(
      sql`WITH ${write}, chained AS (${insert} RETURNING 1), waiting AS (${queueReadSql(tenant, readNext, dequeue)}) SELECT c.written, w.* FROM (SELECT count(*) AS written FROM chained) c LEFT JOIN waiting w ON true ORDER BY w.n`,
    );
    return {
      written: Number(rows[0]?.['written']),
      next: rows.filter((row) => row['n'] !== null).map(queueEntryOf),
    };
  }

  async enqueueAudit(rows: readonly QueuedAuditRow[]): Promise<void> {
    if (rows.length === 0) return;
    const values = rows.map(({ event, seal }) => {
      const row = queueRow(event, seal);
      this.#storable('countersign_audit_queue', QUEUE_COLUMNS, row);
      return row;
    });
    const queued =
      values.length === 1
        ? await this.#s.all(INSERT_QUEUED(values[0]!))
        : await this.#s.all(
            sql`INSERT INTO countersign_audit_queue (${sql.raw(QUEUE_COLUMNS.join(', '))}) VALUES ${sql.join(
              values.map((row) => sql`(${sql.list(row)})`),
              ', ',
            )}${sql.raw(QUEUED_PAST_HEAD)}`,
          );
    for (const row of queued)
      if (row['foreign_seq'] != null)
        throw new CorruptAuditChainError(String(row['tenant']), Number(row['foreign_seq']));
  }

  async getAuditEvents(tenant: string, ids: readonly string[]): Promise<AuditEvent[]> {
    if (ids.length === 0 || this.#unmatchable(tenant, ...ids)) return [];
    const rows = await this.#s.all(
      sql`SELECT * FROM countersign_audit_events WHERE tenant = ${tenant} AND id IN (${sql.list(ids)})`,
    );
    return rows.map(auditFromRow);
  }

  async queuedAuditTenants(): Promise<string[]> {
    const rows = await this.#s.all(sql`SELECT DISTINCT tenant FROM countersign_audit_queue ORDER BY tenant`);
    return rows.map((r) => String(r['tenant']));
  }

  /** Writes what waited for the commit, just before it: the rate counters of the proposals it inserted. */
  async beforeCommit(): Promise<void> {
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
