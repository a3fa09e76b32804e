import type { ChainHead } from '../../audit/event.js';
import { ConfigurationError } from '../../canonical/errors.js';
import type { LocalTransaction } from '../../operation/define-operation.js';
import type { ApprovalRecord, AttemptRecord, GrantRecord, ProposalRecord } from '../records.js';
import { auditFromRow, auditPageSql, auditRow } from '../sql-audit.js';
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
import { countProposalsSql, proposalCountsOf } from '../sql-counts.js';
import { countMatchingSql, listProposalsSql, POSTGRES_PREVIEW_SQL } from '../sql-proposals.js';
import { GRANT_SQL } from '../sql-grants.js';
import type { Store, StoreCapabilities, StoreReader, StoreTransaction } from '../store.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';
import { lastResult, openPgPool, type PgPool, type PgPoolClient, type PgQueryable } from './pg-driver.js';
import { toPositional } from './positional-placeholders.js';
import { assertStorable } from './unstorable-value-error.js';

/** Options of {@link PostgresStore}: your own pool, or a connection string for a pool the store opens. */
export interface PostgresStoreOptions {
  /** A pool you own (a `pg.Pool`, or anything with the slice in `PgPool`). The store never ends it. */
  readonly pool?: PgPool;
  /** A `postgres://` URL; the store opens its own `pg` pool (and ends it on `close()`). */
  readonly connectionString?: string;
  /** Connections in the store's own pool. Default 10. */
  readonly max?: number;
  /**
   * A schema for the tables, with the store's own pool only: `migrate()` creates it and every
   * connection uses it as `search_path`. Lowercase letters, digits and `_`. With your own pool,
   * set `search_path` on the pool instead.
   */
  readonly schema?: string;
  /** Errors of idle connections in the store's own pool (a server restart). Default: ignored; the next query reports them. */
  readonly onIdleError?: (error: Error) => void;
}

import { StoreClosedError } from '../store-errors.js';

export { StoreClosedError };

const CAPABILITIES: StoreCapabilities = Object.freeze({ name: 'postgres', multiProcess: true });
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
// First key of the two-key advisory lock that serializes migrations ('csmg'); the second is the schema's hash.
const MIGRATION_LOCK = 0x63736d67;
// PostgreSQL aborts one of two deadlocked transactions (40P01); 40001 is a serialization failure.
// Both mean "nothing was written, run it again".
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_TRIES = 5;

const PROPOSAL_COLS = PROPOSAL_COLUMNS.map(([, c]) => c);
const ATTEMPT_COLS = ATTEMPT_COLUMNS.map(([, c]) => c);
const AUDIT_COLS = AUDIT_COLUMNS.map(([, c]) => c);
const GRANT_COLS = GRANT_COLUMNS.map(([, c]) => c);
const values = (n: number) => Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');
const INSERT_PROPOSAL = `INSERT INTO countersign_proposals (${PROPOSAL_COLS.join(', ')}) VALUES (${values(PROPOSAL_COLS.length)})`;
const INSERT_ATTEMPT = `INSERT INTO countersign_attempts (${ATTEMPT_COLS.join(', ')}) VALUES (${values(ATTEMPT_COLS.length)})`;
// One round trip appends the event and moves the head (the head row is locked by then): the lock
// is held until COMMIT, so every round trip saved inside it is throughput for the tenant.
const APPEND_AUDIT = `WITH appended AS (INSERT INTO countersign_audit_events (${AUDIT_COLS.join(', ')}) VALUES (${values(AUDIT_COLS.length)}) RETURNING seq)
UPDATE countersign_audit_heads SET seq = $${AUDIT_COLS.indexOf('seq') + 1}, chain_hash = $${AUDIT_COLS.indexOf('chain_hash') + 1} WHERE tenant = $${AUDIT_COLS.indexOf('tenant') + 1}`;

/**
 * The PostgreSQL store, through a `pg` pool: for several app instances or countersign servers
 * behind one database. Each transaction holds one pooled connection (`BEGIN` … `COMMIT`, READ
 * COMMITTED): every state change is a conditional `UPDATE … WHERE status = …`, so a claim is one
 * atomic compare-and-set across all instances, and audit appends lock their tenant's chain head.
 * Migrations are versioned in `countersign_migrations` and applied under an advisory lock, so
 * instances starting together are safe.
 *
 * `pg` is an optional peer dependency: install it, or pass any pool with the `PgPool` slice.
 *
 * @example
 * import pg from 'pg';
 * const store = new PostgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * // or: new PostgresStore({ connectionString: 'postgres://app@db/app', max: 20 })
 * const engine = await createEngine({ store, operations: [payInvoice] });
 */
export class PostgresStore implements Store {
  readonly capabilities = CAPABILITIES;
  readonly #ownPool: boolean;
  readonly #schema: string | undefined;
  readonly #inFlight = new Set<Promise<unknown>>();
  #pool: PgPool | Promise<PgPool>;
  #closed = false;

  constructor(options: PostgresStoreOptions) {
    const { pool, connectionString, schema } = options;
    if ((pool === undefined) === (connectionString === undefined)) {
      throw new ConfigurationError('PostgresStore: pass exactly one of `pool` or `connectionString`');
    }
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
      throw new ConfigurationError(
        `PostgresStore: schema "${schema}" must be lowercase letters, digits and _`,
      );
    }
    if (pool && (schema !== undefined || options.max !== undefined)) {
      throw new ConfigurationError(
        'PostgresStore: `schema` and `max` apply to the store’s own pool; configure your pool instead',
      );
    }
    const max = options.max ?? 10;
    if (!Number.isInteger(max) || max < 1)
      throw new ConfigurationError('PostgresStore: max must be a positive integer');
    this.#schema = schema;
    this.#ownPool = pool === undefined;
    this.#pool =
      pool ??
      openPgPool(
        {
          connectionString: connectionString!,
          max,
          application_name: 'countersign',
          ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
        },
        options.onIdleError ?? (() => {}),
      );
    // A failed dynamic import surfaces on first use; do not let it become an unhandled rejection now.
    if (this.#pool instanceof Promise) this.#pool.catch(() => {});
  }

  async #connect(): Promise<PgPoolClient> {
    if (this.#closed) throw new StoreClosedError('the PostgreSQL store is closed');
    this.#pool = await this.#pool;
    return this.#pool.connect();
  }

  /** Applies pending migrations in one transaction under an advisory lock. Safe to call on every start, from many instances at once. */
  migrate(): Promise<void> {
    return this.#track(async () => {
      await this.#migrate();
    });
  }

  /**
   * Like `migrate()`, and says what it did: the migrations applied now and those already there.
   * Used by `countersign migrate`.
   */
  migrateWithReport(): Promise<MigrationReport> {
    return this.#track(() => this.#migrate());
  }

  async #migrate(): Promise<MigrationReport> {
    const client = await this.#connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const schema = this.#schema ?? null;
      await client.query(
        "SELECT pg_advisory_xact_lock($1, hashtext(coalesce($2::text, current_schema()::text, '')))",
        [MIGRATION_LOCK, schema],
      );
      if (this.#schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`);
      await client.query(
        'CREATE TABLE IF NOT EXISTS countersign_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
      );
      const present = new Set(
        (await client.query('SELECT version FROM countersign_migrations')).rows.map((r) =>
          Number(r['version']),
        ),
      );
      const applied: { version: number; name: string }[] = [];
      for (const m of POSTGRES_MIGRATIONS) {
        if (present.has(m.version)) continue;
        for (const statement of m.statements) await client.query(statement);
        await client.query(
          'INSERT INTO countersign_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
          [m.version, m.name, Date.now()],
        );
        applied.push({ version: m.version, name: m.name });
      }
      await client.query('COMMIT');
      return {
        applied,
        alreadyApplied: POSTGRES_MIGRATIONS.filter((m) => present.has(m.version)).map((m) => ({
          version: m.version,
          name: m.name,
        })),
      };
    } catch (error) {
      broken = await rollback(client);
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /**
   * Runs `fn` in one transaction on one pooled connection. If PostgreSQL aborts it for a deadlock
   * or a serialization failure (nothing was written), `fn` runs again, up to 5 times in all.
   */
  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.#track(async () => {
      for (let tries = 1; ; tries++) {
        const client = await this.#connect();
        let broken: Error | undefined;
        try {
          await client.query('BEGIN');
          const result = await fn(storeTransaction(client));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          broken = await rollback(client);
          if (tries < MAX_TRIES && !broken && RETRYABLE.has(sqlState(error))) {
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * tries));
            continue;
          }
          throw error;
        } finally {
          client.release(broken);
        }
      }
    });
  }

  /** Runs read-only `fn` on one pooled connection, each statement in autocommit. */
  read<T>(fn: (reader: StoreReader) => Promise<T>): Promise<T> {
    return this.#track(async () => {
      const client = await this.#connect();
      try {
        return await fn(storeTransaction(client));
      } finally {
        client.release();
      }
    });
  }

  /** Waits for in-flight transactions, then ends the pool if the store opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
    if (this.#ownPool) {
      const pool = await Promise.resolve(this.#pool).catch(() => undefined);
      await pool?.end();
    }
  }

  #track<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError('the PostgreSQL store is closed'));
    const running = work();
    this.#inFlight.add(running);
    const done = () => this.#inFlight.delete(running);
    running.then(done, done);
    return running;
  }
}

/** What `migrateWithReport()` did. */
export interface MigrationReport {
  readonly applied: readonly { readonly version: number; readonly name: string }[];
  readonly alreadyApplied: readonly { readonly version: number; readonly name: string }[];
}

function sqlState(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : '';
}

/** Rolls back; returns the error when the connection is unusable (it is then destroyed, not pooled). */
async function rollback(client: PgPoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

function storeTransaction(client: PgQueryable): StoreTransaction {
  const q = (text: string, params?: unknown[]) => client.query(text, params);
  const proposal = (row: Record<string, unknown>) => fromRow<ProposalRecord>(PROPOSAL_COLUMNS, row);
  const attempt = (row: Record<string, unknown>) => fromRow<AttemptRecord>(ATTEMPT_COLUMNS, row);
  const grant = (row: Record<string, unknown>) => fromRow<GrantRecord>(GRANT_COLUMNS, row);
  const head = (row: Record<string, unknown> | undefined): ChainHead | undefined =>
    row && Number(row['seq']) > 0
      ? { seq: Number(row['seq']), chainHash: String(row['chain_hash']) }
      : undefined;
  // PostgreSQL refuses a NUL in a text parameter; no stored key holds one (writes refuse it), so a
  // lookup by such a key matches nothing, as on SQLite, instead of failing the request.
  const unmatchable = (...keys: readonly (string | undefined)[]) => keys.some((k) => k?.includes('\u0000'));
  // Chain heads this transaction has locked (null: locked, no events yet). Valid until it ends.
  const lockedHeads = new Map<string, ChainHead | null>();
  const local: LocalTransaction = {
    run: async (sql, params) => {
      const result = lastResult(
        await q(toPositional(sql), params && params.length > 0 ? [...params] : undefined),
      );
      return { changes: result.rowCount ?? 0 };
    },
    all: async (sql, params) =>
      lastResult(await q(toPositional(sql), params && params.length > 0 ? [...params] : undefined)).rows,
  };
  return {
    local,
    insertProposal: async (record) => {
      const row = toRow(PROPOSAL_COLUMNS, record);
      assertStorable('countersign_proposals', PROPOSAL_COLS, row);
      await q(INSERT_PROPOSAL, row);
    },
    getProposal: async (tenant, id) => {
      if (unmatchable(tenant, id)) return undefined;
      const { rows } = await q('SELECT * FROM countersign_proposals WHERE tenant = $1 AND id = $2', [
        tenant,
        id,
      ]);
      return rows[0] ? proposal(rows[0]) : undefined;
    },
    listProposals: async (tenant, query) => {
      // PostgreSQL refuses text holding NUL: such a filter matches nothing.
      if (unmatchable(tenant, query.search, query.operation, query.requestedBy, query.runId)) return [];
      const [sql, params] = listProposalsSql(tenant, query, POSTGRES_PREVIEW_SQL);
      return (await q(toPositional(sql), params)).rows.map(proposal);
    },
    countMatchingProposals: async (tenant, filter) => {
      if (unmatchable(tenant, filter.search, filter.operation, filter.requestedBy, filter.runId)) return 0;
      const [sql, params] = countMatchingSql(tenant, filter, POSTGRES_PREVIEW_SQL);
      return Number((await q(toPositional(sql), params)).rows[0]?.['n'] ?? 0);
    },
    updateProposal: async (tenant, id, expected, patch) => {
      const { sets, params, columns } = assignments(PROPOSAL_COLUMNS, patch);
      if (sets.length === 0) throw new Error('updateProposal: empty patch');
      assertStorable('countersign_proposals', columns, params);
      params.push(tenant, id, expected.status);
      let sql = `UPDATE countersign_proposals SET ${sets.join(', ')} WHERE tenant = $${params.length - 2} AND id = $${params.length - 1} AND status = $${params.length}`;
      if (expected.attempt !== undefined) {
        params.push(expected.attempt);
        sql += ` AND current_attempt = $${params.length}`;
      }
      return (await q(sql, params)).rowCount === 1;
    },
    countProposals: async (tenant, query) => {
      const [sql, params] = countProposalsSql(tenant, query);
      return proposalCountsOf((await q(toPositional(sql), params)).rows[0]);
    },
    listExpired: async (now, limit) => {
      const { rows } = await q(
        "SELECT tenant, id FROM countersign_proposals WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
        [now, limit],
      );
      return rows.map((r) => ({ tenant: String(r['tenant']), id: String(r['id']) }));
    },
    insertAttempt: async (record) => {
      const row = toRow(ATTEMPT_COLUMNS, record);
      assertStorable('countersign_attempts', ATTEMPT_COLS, row);
      await q(INSERT_ATTEMPT, row);
    },
    getAttempt: async (tenant, id) => {
      const { rows } = await q('SELECT * FROM countersign_attempts WHERE tenant = $1 AND id = $2', [
        tenant,
        id,
      ]);
      return rows[0] ? attempt(rows[0]) : undefined;
    },
    listAttempts: async (tenant, proposalId) =>
      (
        await q('SELECT * FROM countersign_attempts WHERE tenant = $1 AND proposal_id = $2 ORDER BY number', [
          tenant,
          proposalId,
        ])
      ).rows.map(attempt),
    updateAttempt: async (tenant, id, expectedStatus, patch, expected = {}) => {
      const { sets, params, columns } = assignments(ATTEMPT_COLUMNS, patch);
      if (sets.length === 0) throw new Error('updateAttempt: empty patch');
      assertStorable('countersign_attempts', columns, params);
      params.push(tenant, id, expectedStatus);
      const n = params.length;
      let sql = `UPDATE countersign_attempts SET ${sets.join(', ')} WHERE tenant = $${n - 2} AND id = $${n - 1} AND status = $${n}`;
      if (expected.leaseBefore !== undefined) {
        params.push(expected.leaseBefore);
        sql += ` AND lease_until < $${n + 1}`;
      }
      return (await q(sql, params)).rowCount === 1;
    },
    listExpiredLeases: async (now, limit) =>
      (
        await q(
          "SELECT * FROM countersign_attempts WHERE status = 'executing' AND lease_until < $1 ORDER BY lease_until LIMIT $2",
          [now, limit],
        )
      ).rows.map(attempt),
    insertGrant: async (record) => {
      const row = toRow(GRANT_COLUMNS, record);
      assertStorable('countersign_grants', GRANT_COLS, row);
      await q(toPositional(GRANT_SQL.insert), row);
    },
    getGrant: async (tenant, id) => {
      if (unmatchable(tenant, id)) return undefined;
      const { rows } = await q(toPositional(GRANT_SQL.get), [tenant, id]);
      return rows[0] ? grant(rows[0]) : undefined;
    },
    listGrants: async (tenant, query) => {
      const { rows } =
        query.subject === undefined
          ? await q(toPositional(GRANT_SQL.list), [tenant, query.limit])
          : await q(toPositional(GRANT_SQL.listBySubject), [tenant, query.subject, query.limit]);
      return rows.map(grant);
    },
    spendGrant: async (tenant, id, spend) =>
      (await q(toPositional(GRANT_SQL.spend), GRANT_SQL.spendParams(tenant, id, spend))).rowCount === 1,
    insertApproval: async (record) =>
      (await q(toPositional(GRANT_SQL.insertApproval), toRow(APPROVAL_COLUMNS, record))).rowCount === 1,
    listApprovals: async (tenant, proposalId) =>
      unmatchable(tenant, proposalId)
        ? []
        : (await q(toPositional(GRANT_SQL.listApprovals), [tenant, proposalId])).rows.map((row) =>
            fromRow<ApprovalRecord>(APPROVAL_COLUMNS, row),
          ),
    revokeGrant: async (tenant, id, revoke) => {
      assertStorable('countersign_grants', ['revoked_by'], [revoke.by]);
      return (await q(toPositional(GRANT_SQL.revoke), [revoke.now, revoke.by, tenant, id])).rowCount === 1;
    },
    appendAudit: async (tenant, build) => {
      // The head row serializes appends per tenant and stays locked until COMMIT, so a second
      // append in the same transaction knows the head without asking. Otherwise one locking read:
      // the row exists after a tenant's first event; the first append creates it (concurrent
      // creators wait on the conflict, then lock the row the winner made).
      let current = lockedHeads.get(tenant);
      if (current === undefined) {
        const lock = 'SELECT seq, chain_hash FROM countersign_audit_heads WHERE tenant = $1 FOR UPDATE';
        let { rows } = await q(lock, [tenant]);
        if (rows.length === 0) {
          await q(
            "INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES ($1, 0, '') ON CONFLICT (tenant) DO NOTHING",
            [tenant],
          );
          ({ rows } = await q(lock, [tenant]));
        }
        current = head(rows[0]) ?? null;
      }
      const event = build(current ?? undefined);
      if (event.tenant !== tenant)
        throw new Error(`appendAudit: an event of ${event.tenant} built for the chain of ${tenant}`);
      const row = auditRow(event);
      assertStorable('countersign_audit_events', AUDIT_COLS, row);
      await q(APPEND_AUDIT, row);
      lockedHeads.set(tenant, { seq: event.seq, chainHash: event.chainHash });
      return event;
    },
    listAudit: async (tenant, query) => {
      if (unmatchable(tenant, query.proposalId)) return [];
      const { text, params } = auditPageSql(tenant, query, (n) => `$${n}`);
      const { rows } = await q(text, params);
      return rows.map(auditFromRow);
    },
    auditHead: async (tenant) =>
      head(
        (await q('SELECT seq, chain_hash FROM countersign_audit_heads WHERE tenant = $1', [tenant])).rows[0],
      ),
    auditTenants: async () =>
      (await q('SELECT DISTINCT tenant FROM countersign_audit_events ORDER BY tenant')).rows.map((r) =>
        String(r['tenant']),
      ),
  };
}

function assignments(fieldColumns: readonly (readonly [string, string])[], patch: object) {
  const sets: string[] = [];
  const params: unknown[] = [];
  const columns: string[] = [];
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const column = columnOf(fieldColumns, field);
    params.push(value);
    columns.push(column);
    sets.push(`${column} = $${params.length}`);
  }
  return { sets, params, columns };
}
