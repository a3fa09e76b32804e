import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ConfigurationError } from '../../canonical/errors.js';
import type { ChainHead } from '../../audit/event.js';
import type { LocalTransaction } from '../../operation/define-operation.js';
import type {
  ApprovalRecord,
  AttemptPatch,
  AttemptRecord,
  AttemptStatus,
  GrantRecord,
  ProposalRecord,
} from '../records.js';
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
import { GRANT_SQL } from '../sql-grants.js';
import { countMatchingSql, listProposalsSql, SQLITE_PREVIEW_SQL } from '../sql-proposals.js';
import type { Store, StoreCapabilities, StoreReader, StoreTransaction } from '../store.js';
import { SQLITE_MIGRATIONS } from './migrations.js';

/**
 * Creates a missing database file readable and writable by its owner only, before SQLite opens
 * it: SQLite would create it 0644, leaving proposals, sessions and the audit trail readable by
 * every local user, and it gives the -wal and -shm files the database file's mode. A file that
 * exists keeps its mode; a file that cannot be created is left for SQLite to report.
 */
function createPrivateFile(path: string): void {
  if (path === '' || path === ':memory:' || path.startsWith('file:')) return;
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch {
    // EEXIST: it is there already. Anything else (no such directory, no permission): SQLite's
    // own open fails next with its own message.
  }
}

// The slice of better-sqlite3 this backend uses, declared here so the core never needs its types.
interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
/**
 * better-sqlite3 is an optional peer dependency (a PostgreSQL-only install never builds it): loaded
 * when a store opens its own file, with an error that says what to install when it is absent.
 */
function loadBetterSqlite3(): SqliteConstructor {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as SqliteConstructor;
  } catch (error) {
    if (
      (error as { code?: unknown } | null)?.code === 'MODULE_NOT_FOUND' &&
      String(error).includes("'better-sqlite3'")
    ) {
      throw new ConfigurationError(
        'the SQLite store (countersign/sqlite) needs the "better-sqlite3" package: npm install better-sqlite3',
        { cause: error },
      );
    }
    throw error;
  }
}

/** The slice of a better-sqlite3 `Database` the SQLite store uses. */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
  readonly inTransaction: boolean;
}
type SqliteConstructor = new (path: string, options?: { timeout?: number }) => SqliteDatabase;

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /** A database file (created if missing, mode 0600: its -wal and -shm files follow), or `:memory:`. */
  readonly path?: string;
  /** An open better-sqlite3 database to use instead of `path` (the caller closes it). */
  readonly database?: SqliteDatabase;
  /** How long to wait for another process's write lock, in ms (default 10 000). */
  readonly busyTimeoutMs?: number;
  /** `NORMAL` (default; durable at checkpoints, safe in WAL) or `FULL` (durable at every commit). */
  readonly synchronous?: 'NORMAL' | 'FULL';
}

/** Serializes async work on the one connection, so a transaction spanning awaits is never interleaved. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

const UPSERT_HEAD =
  'INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (?, ?, ?) ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, chain_hash = excluded.chain_hash';

const CAPABILITIES: StoreCapabilities = Object.freeze({ name: 'sqlite', multiProcess: true });

/**
 * The embedded default store: one SQLite file in WAL mode through better-sqlite3. Several
 * processes may share the file; every write transaction is `BEGIN IMMEDIATE`, so a claim is one
 * atomic compare-and-set across them.
 *
 * @example
 * const store = new SqliteStore({ path: 'app.db' });
 * const engine = await createEngine({ store, operations: [payInvoice] });
 */
export class SqliteStore implements Store {
  readonly capabilities = CAPABILITIES;
  readonly #db: SqliteDatabase;
  readonly #ownsDb: boolean;
  readonly #mutex = new Mutex();
  readonly #statements = new Map<string, SqliteStatement>();
  readonly #tx: StoreTransaction;
  readonly #heads = new Map<string, ChainHead>();
  #closed = false;

  constructor(options: SqliteStoreOptions = {}) {
    if (options.database) {
      this.#db = options.database;
      this.#ownsDb = false;
    } else {
      const Database = loadBetterSqlite3();
      const path = options.path ?? 'countersign.db';
      createPrivateFile(path);
      this.#db = new Database(path, { timeout: options.busyTimeoutMs ?? 10_000 });
      this.#ownsDb = true;
    }
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
    this.#db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    this.#db.pragma('foreign_keys = ON');
    this.#tx = this.#makeTransaction();
  }

  /** The underlying connection, for the application's own local-effect tables. */
  get database(): SqliteDatabase {
    return this.#db;
  }

  #stmt(sql: string): SqliteStatement {
    let s = this.#statements.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#statements.set(sql, s);
    }
    return s;
  }

  async migrate(): Promise<void> {
    await this.#mutex.run(async () => {
      this.#db.exec('BEGIN IMMEDIATE');
      try {
        this.#db.exec(
          'CREATE TABLE IF NOT EXISTS countersign_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
        );
        const applied = new Set(
          (this.#db.prepare('SELECT version FROM countersign_migrations').all() as { version: number }[]).map(
            (r) => r.version,
          ),
        );
        for (const m of SQLITE_MIGRATIONS) {
          if (applied.has(m.version)) continue;
          this.#db.exec(m.sql);
          this.#db
            .prepare('INSERT INTO countersign_migrations (version, name, applied_at) VALUES (?, ?, ?)')
            .run(m.version, m.name, Date.now());
        }
        this.#db.exec('COMMIT');
      } catch (error) {
        if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
        throw error;
      }
    });
  }

  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.#mutex.run(async () => {
      if (this.#closed) throw new Error('the SQLite store is closed');
      this.#stmt('BEGIN IMMEDIATE').run();
      this.#heads.clear();
      try {
        const result = await fn(this.#tx);
        // Chain heads advanced in this transaction are written once, just before the commit.
        for (const [tenant, head] of this.#heads)
          this.#stmt(UPSERT_HEAD).run(tenant, head.seq, head.chainHash);
        this.#stmt('COMMIT').run();
        return result;
      } catch (error) {
        if (this.#db.inTransaction) this.#stmt('ROLLBACK').run();
        throw error;
      }
    });
  }

  read<T>(fn: (reader: StoreReader) => Promise<T>): Promise<T> {
    // Through the mutex all the same: on one connection, a read during another call's open
    // transaction would see that transaction's uncommitted rows.
    return this.#mutex.run(async () => {
      if (this.#closed) throw new Error('the SQLite store is closed');
      return fn(this.#tx);
    });
  }

  async close(): Promise<void> {
    await this.#mutex.run(async () => {
      if (this.#closed) return;
      this.#closed = true;
      if (this.#ownsDb) this.#db.close();
    });
  }

  #makeTransaction(): StoreTransaction {
    const stmt = (sql: string) => this.#stmt(sql);
    const proposalCols = PROPOSAL_COLUMNS.map(([, c]) => c);
    const attemptCols = ATTEMPT_COLUMNS.map(([, c]) => c);
    const auditCols = AUDIT_COLUMNS.map(([, c]) => c);
    const insertProposal = `INSERT INTO countersign_proposals (${proposalCols.join(', ')}) VALUES (${proposalCols.map(() => '?').join(', ')})`;
    const insertAttempt = `INSERT INTO countersign_attempts (${attemptCols.join(', ')}) VALUES (${attemptCols.map(() => '?').join(', ')})`;
    const insertAudit = `INSERT INTO countersign_audit_events (${auditCols.join(', ')}) VALUES (${auditCols.map(() => '?').join(', ')})`;
    const proposal = (row: unknown) =>
      row ? fromRow<ProposalRecord>(PROPOSAL_COLUMNS, row as Record<string, unknown>) : undefined;
    const attempt = (row: unknown) => fromRow<AttemptRecord>(ATTEMPT_COLUMNS, row as Record<string, unknown>);
    const readHead = (tenant: string): ChainHead | undefined => {
      const row = stmt('SELECT seq, chain_hash FROM countersign_audit_heads WHERE tenant = ?').get(tenant) as
        | { seq: number; chain_hash: string }
        | undefined;
      return row ? { seq: row.seq, chainHash: row.chain_hash } : undefined;
    };
    const local: LocalTransaction = {
      run: async (sql, params = []) => ({ changes: stmt(sql).run(...params).changes }),
      all: async (sql, params = []) => stmt(sql).all(...params) as Record<string, unknown>[],
    };
    return {
      local,
      insertProposal: async (record) => {
        stmt(insertProposal).run(...toRow(PROPOSAL_COLUMNS, record));
      },
      getProposal: async (tenant, id) =>
        proposal(stmt('SELECT * FROM countersign_proposals WHERE tenant = ? AND id = ?').get(tenant, id)),
      listProposals: async (tenant, query) => {
        const [sql, params] = listProposalsSql(tenant, query, SQLITE_PREVIEW_SQL);
        return stmt(sql)
          .all(...params)
          .map((row) => fromRow<ProposalRecord>(PROPOSAL_COLUMNS, row as Record<string, unknown>));
      },
      countMatchingProposals: async (tenant, filter) => {
        const [sql, params] = countMatchingSql(tenant, filter, SQLITE_PREVIEW_SQL);
        return Number((stmt(sql).get(...params) as { n: number } | undefined)?.n ?? 0);
      },
      updateProposal: async (tenant, id, expected, patch) => {
        const { sets, values } = assignments(PROPOSAL_COLUMNS, patch as Record<string, unknown>);
        if (sets.length === 0) throw new Error('updateProposal: empty patch');
        const attemptClause = expected.attempt === undefined ? '' : ' AND current_attempt = ?';
        const params = [
          ...values,
          tenant,
          id,
          expected.status,
          ...(expected.attempt === undefined ? [] : [expected.attempt]),
        ];
        const sql = `UPDATE countersign_proposals SET ${sets.join(', ')} WHERE tenant = ? AND id = ? AND status = ?${attemptClause}`;
        return stmt(sql).run(...params).changes === 1;
      },
      countProposals: async (tenant, query) => {
        const [sql, params] = countProposalsSql(tenant, query);
        return proposalCountsOf(stmt(sql).get(...params) as Record<string, unknown> | undefined);
      },
      listExpired: async (now, limit) =>
        stmt(
          "SELECT tenant, id FROM countersign_proposals WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
        ).all(now, limit) as {
          tenant: string;
          id: string;
        }[],
      insertAttempt: async (record) => {
        stmt(insertAttempt).run(...toRow(ATTEMPT_COLUMNS, record));
      },
      getAttempt: async (tenant, id) => {
        const row = stmt('SELECT * FROM countersign_attempts WHERE tenant = ? AND id = ?').get(tenant, id);
        return row ? attempt(row) : undefined;
      },
      listAttempts: async (tenant, proposalId) =>
        stmt('SELECT * FROM countersign_attempts WHERE tenant = ? AND proposal_id = ? ORDER BY number')
          .all(tenant, proposalId)
          .map(attempt),
      updateAttempt: async (
        tenant,
        id,
        expectedStatus: AttemptStatus,
        patch: AttemptPatch,
        expected = {},
      ) => {
        const { sets, values } = assignments(ATTEMPT_COLUMNS, patch as Record<string, unknown>);
        const lease = expected.leaseBefore === undefined ? '' : ' AND lease_until < ?';
        const sql = `UPDATE countersign_attempts SET ${sets.join(', ')} WHERE tenant = ? AND id = ? AND status = ?${lease}`;
        const params = [
          ...values,
          tenant,
          id,
          expectedStatus,
          ...(expected.leaseBefore === undefined ? [] : [expected.leaseBefore]),
        ];
        return stmt(sql).run(...params).changes === 1;
      },
      listExpiredLeases: async (now, limit) =>
        stmt(
          "SELECT * FROM countersign_attempts WHERE status = 'executing' AND lease_until < ? ORDER BY lease_until LIMIT ?",
        )
          .all(now, limit)
          .map(attempt),
      insertGrant: async (record) => {
        stmt(GRANT_SQL.insert).run(...toRow(GRANT_COLUMNS, record));
      },
      getGrant: async (tenant, id) => {
        const row = stmt(GRANT_SQL.get).get(tenant, id);
        return row ? fromRow<GrantRecord>(GRANT_COLUMNS, row as Record<string, unknown>) : undefined;
      },
      listGrants: async (tenant, query) => {
        const rows =
          query.subject === undefined
            ? stmt(GRANT_SQL.list).all(tenant, query.limit)
            : stmt(GRANT_SQL.listBySubject).all(tenant, query.subject, query.limit);
        return rows.map((row) => fromRow<GrantRecord>(GRANT_COLUMNS, row as Record<string, unknown>));
      },
      spendGrant: async (tenant, id, spend) =>
        stmt(GRANT_SQL.spend).run(...GRANT_SQL.spendParams(tenant, id, spend)).changes === 1,
      revokeGrant: async (tenant, id, revoke) =>
        stmt(GRANT_SQL.revoke).run(revoke.now, revoke.by, tenant, id).changes === 1,
      insertApproval: async (record) =>
        stmt(GRANT_SQL.insertApproval).run(...toRow(APPROVAL_COLUMNS, record)).changes === 1,
      listApprovals: async (tenant, proposalId) =>
        stmt(GRANT_SQL.listApprovals)
          .all(tenant, proposalId)
          .map((row) => fromRow<ApprovalRecord>(APPROVAL_COLUMNS, row as Record<string, unknown>)),
      appendAudit: async (tenant, build) => {
        const event = build(this.#heads.get(tenant) ?? readHead(tenant));
        stmt(insertAudit).run(...auditRow(event));
        this.#heads.set(tenant, { seq: event.seq, chainHash: event.chainHash });
        return event;
      },
      listAudit: async (tenant, query) => {
        const { text, params } = auditPageSql(tenant, query, () => '?');
        return stmt(text)
          .all(...params)
          .map((r) => auditFromRow(r as Record<string, unknown>));
      },
      auditHead: async (tenant) => this.#heads.get(tenant) ?? readHead(tenant),
      auditTenants: async () =>
        (
          stmt('SELECT DISTINCT tenant FROM countersign_audit_events ORDER BY tenant').all() as {
            tenant: string;
          }[]
        ).map((r) => r.tenant),
    };
  }
}

function assignments(columns: readonly (readonly [string, string])[], patch: Record<string, unknown>) {
  const sets: string[] = [];
  const values: unknown[] = [];
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    sets.push(`${columnOf(columns, field)} = ?`);
    values.push(value);
  }
  return { sets, values };
}
