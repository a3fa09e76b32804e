import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ConfigurationError } from '../../canonical/errors.js';
import { SQLITE_PREVIEW_SQL } from '../sql-proposals.js';
import type { SqlCapabilities, SqlDriver, SqlSession } from '../sql/driver.js';
import type { SqlQuery } from '../../sql/sql.js';
import { StoreClosedError } from '../store-errors.js';
import { asStoreFault } from '../store-fault.js';

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
  /**
   * The page size, in bytes, of a database this store creates: a power of two from 512 to 65 536
   * (default {@link SQLITE_PAGE_SIZE}). A database that already holds tables keeps its own.
   */
  readonly pageSize?: number;
}

/**
 * The page size of a new database. Every write transaction appends each page it changes to the WAL
 * whole, and an approval's four transactions each change some fifteen b-trees (a proposal's
 * indexes, the audit event's, the chain head) by one small entry: with SQLite's default 4 KiB pages
 * that is about 264 KB of WAL per approved call, with 1 KiB pages about 78 KB, for about the same
 * CPU and file size (`npm run bench:wal`, BENCHMARKS.md).
 */
export const SQLITE_PAGE_SIZE = 1024;

/**
 * How much WAL a connection lets grow before it checkpoints, in bytes: SQLite's default (1,000
 * pages) at its default 4 KiB pages. Counted in pages, that default would checkpoint four times as
 * often with 1 KiB pages, and a checkpoint copies each page it holds once however often the WAL
 * rewrote it (an index's newest leaf, the chain head): every 4 MiB, an approval costs about 11 %
 * less CPU than every 1 MiB (`npm run bench:checkpoint`, BENCHMARKS.md).
 */
export const SQLITE_CHECKPOINT_BYTES = 4 * 1024 * 1024;

/** The `wal_autocheckpoint` (in pages) of a database with `pageSize` pages: see {@link SQLITE_CHECKPOINT_BYTES}. */
export function walAutocheckpointPages(pageSize: number): number {
  return Math.max(1, Math.round(SQLITE_CHECKPOINT_BYTES / pageSize));
}

function pageSizeOf(options: SqliteStoreOptions): number {
  const size = options.pageSize ?? SQLITE_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 512 || size > 65_536 || (size & (size - 1)) !== 0)
    throw new ConfigurationError(`pageSize: ${String(size)} is not a power of two from 512 to 65536`);
  return size;
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

const CAPABILITIES: SqlCapabilities = Object.freeze({
  dialect: 'sqlite',
  rowLocks: false,
  skipLocked: false,
  advisoryLocks: false,
  returning: true,
  multiProcess: true,
});

/**
 * better-sqlite3 under the one SQL store: one connection in WAL mode, every write transaction
 * `BEGIN IMMEDIATE` (so a compare-and-set is atomic across processes sharing the file), and
 * every statement prepared once.
 */
/** Prepared statements a SQLite store keeps, by text. */
export const STATEMENT_CACHE_SIZE = 1000;

export class SqliteDriver implements SqlDriver {
  readonly name = 'sqlite';
  readonly capabilities = CAPABILITIES;
  readonly preview = SQLITE_PREVIEW_SQL;
  readonly database: SqliteDatabase;
  readonly #ownsDb: boolean;
  readonly #mutex = new Mutex();
  readonly #statements = new Map<string, SqliteStatement>();
  readonly #session: SqlSession;
  #closed = false;

  constructor(options: SqliteStoreOptions = {}) {
    const pageSize = pageSizeOf(options);
    if (options.database) {
      this.database = options.database;
      this.#ownsDb = false;
    } else {
      const Database = loadBetterSqlite3();
      const path = options.path ?? 'countersign.db';
      createPrivateFile(path);
      this.database = new Database(path, { timeout: options.busyTimeoutMs ?? 10_000 });
      this.#ownsDb = true;
    }
    // Only a database without pages yet takes a page size; switching to WAL fixes it for good.
    if (this.database.pragma('page_count', { simple: true }) === 0)
      this.database.pragma(`page_size = ${pageSize}`);
    this.database.pragma('journal_mode = WAL');
    const pages = this.database.pragma('page_size', { simple: true }) as number;
    this.database.pragma(`wal_autocheckpoint = ${walAutocheckpointPages(pages)}`);
    this.database.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
    this.database.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    this.database.pragma('foreign_keys = ON');
    const all = (text: string, values: readonly unknown[]) =>
      this.#stmt(text).all(...values) as Record<string, unknown>[];
    const run = (text: string, values: readonly unknown[]) => this.#stmt(text).run(...values).changes;
    this.#session = {
      all: async (query: SqlQuery) => {
        const { text, values } = query.render('sqlite');
        return all(text, values);
      },
      run: async (query: SqlQuery) => {
        const { text, values } = query.render('sqlite');
        return { changes: run(text, values) };
      },
      native: async (text, values, want) =>
        want === 'rows' ? { rows: all(text, values), changes: 0 } : { rows: [], changes: run(text, values) },
      exec: async (script) => {
        this.database.exec(script);
      },
    };
  }

  #stmt(text: string): SqliteStatement {
    let s = this.#statements.get(text);
    if (!s) {
      s = this.database.prepare(text);
      // Texts vary with list lengths and with the application's own SQL (`tx.local`), so the cache
      // is bounded: the oldest statement goes (to be prepared again if it comes back).
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next();
        if (!oldest.done) this.#statements.delete(oldest.value);
      }
      this.#statements.set(text, s);
    }
    return s;
  }

  /** How many prepared statements are kept (at most {@link STATEMENT_CACHE_SIZE}). */
  get cachedStatements(): number {
    return this.#statements.size;
  }

  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.#mutex.run(async () => {
      if (this.#closed) throw new StoreClosedError('the SQLite store is closed');
      // A transaction a failed ROLLBACK left open (the disk failed twice) is ended first.
      this.#rollback();
      try {
        this.#stmt('BEGIN IMMEDIATE').run();
      } catch (error) {
        throw asStoreFault(error);
      }
      try {
        const result = await fn(this.#session);
        this.#stmt('COMMIT').run();
        return result;
      } catch (error) {
        this.#rollback();
        throw asStoreFault(error);
      }
    });
  }

  read<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    // Through the mutex all the same: on one connection, a read during another call's open
    // transaction would see that transaction's uncommitted rows.
    return this.#mutex.run(async () => {
      if (this.#closed) throw new StoreClosedError('the SQLite store is closed');
      try {
        return await fn(this.#session);
      } catch (error) {
        throw asStoreFault(error);
      }
    });
  }

  // A failed COMMIT on a full disk may leave the transaction open, or SQLite may have rolled it
  // back itself; a ROLLBACK that fails too (the disk failed) must not hide the first error.
  #rollback(): void {
    try {
      if (this.database.inTransaction) this.#stmt('ROLLBACK').run();
    } catch {
      // The first error is the one reported; SQLite rolls back a hot journal on the next open.
    }
  }

  async beforeMigrations(): Promise<void> {}

  async close(): Promise<void> {
    await this.#mutex.run(async () => {
      if (this.#closed) return;
      this.#closed = true;
      if (this.#ownsDb) this.database.close();
    });
  }
}
