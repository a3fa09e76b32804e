import type { PreviewSql } from '../sql-proposals.js';
import type { SqlDialect, SqlQuery } from '../../sql/sql.js';

/**
 * What one SQL backend can do, named once: the store asks these flags instead of the backend's
 * name, so a statement only one dialect has is chosen in one place.
 */
export interface SqlCapabilities {
  readonly dialect: SqlDialect;
  /** `SELECT … FOR UPDATE` locks rows until commit (PostgreSQL); otherwise the write lock is the whole database. */
  readonly rowLocks: boolean;
  /** `FOR UPDATE SKIP LOCKED`: concurrent claimers pass over each other's candidate rows. */
  readonly skipLocked: boolean;
  /** Transaction-scoped advisory locks (`pg_advisory_xact_lock`), e.g. to serialize migrations. */
  readonly advisoryLocks: boolean;
  /** `INSERT … RETURNING` and `UPDATE … RETURNING`. */
  readonly returning: boolean;
  /** Several processes or servers may share the database. */
  readonly multiProcess: boolean;
}

/** One connection inside a transaction (or a read): every statement goes through here. */
export interface SqlSession {
  /** Rows of a query. */
  all(query: SqlQuery): Promise<Record<string, unknown>[]>;
  /** Runs a statement; `changes` is the number of rows it changed. */
  run(query: SqlQuery): Promise<{ readonly changes: number }>;
  /**
   * Statement text in the dialect's own form, with `?` (SQLite) or `$n` (PostgreSQL) placeholders:
   * its rows when `want` is `rows`, else the rows it changed.
   */
  native(
    text: string,
    values: readonly unknown[],
    want: 'rows' | 'changes',
  ): Promise<{ readonly rows: Record<string, unknown>[]; readonly changes: number }>;
  /** A script of DDL statements without parameters (a migration). */
  exec(script: string): Promise<void>;
}

/**
 * The seam between the one SQL store and a database library (better-sqlite3, pg, PGlite through
 * the pg slice): transactions, reads, and the dialect's few differences.
 */
export interface SqlDriver {
  /** The backend's name, as in `Store.capabilities.name`. */
  readonly name: string;
  readonly capabilities: SqlCapabilities;
  /** Reading inside the stored preview JSON. */
  readonly preview: PreviewSql;
  /**
   * Runs `fn` in one write transaction; commits when it resolves, rolls back when it throws. May
   * run `fn` again after a deadlock or serialization failure (nothing was written).
   */
  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Runs read-only `fn` without the write lock. */
  read<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Work before the migrations, inside their transaction (PostgreSQL: lock, create the schema). */
  beforeMigrations(session: SqlSession): Promise<void>;
  /** Finishes in-flight work and closes what the driver opened. */
  close(): Promise<void>;
}
