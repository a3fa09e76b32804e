import { ConfigurationError } from '../../canonical/errors.js';
import { PostgresDriver } from '../postgres/postgres-driver.js';
import type { SqlCapabilities, SqlDriver, SqlSession } from '../sql/driver.js';
import { POSTGRES_PREVIEW_SQL } from '../sql-proposals.js';
import { StoreClosedError } from '../store-errors.js';
import { openPglite, type PgliteDatabase, pglitePool } from './pglite-pool.js';

/** Options of {@link PgliteStore}: a data directory the store opens, or your own PGlite database. */
export interface PgliteStoreOptions {
  /**
   * Where the store opens its own PGlite database: a directory (created if missing), or
   * `memory://` for a throwaway one. Default `memory://`. The store closes it on `close()`.
   */
  readonly dataDir?: string;
  /** A PGlite database you own (a `PGlite`, or anything with the `PgliteDatabase` slice). The store never closes it. */
  readonly database?: PgliteDatabase;
  /**
   * A schema for the tables (created if missing): several stores may share one database, each in
   * its own schema. Lowercase letters, digits and `_`.
   */
  readonly schema?: string;
}

const CAPABILITIES: SqlCapabilities = Object.freeze({
  dialect: 'postgres',
  rowLocks: true,
  skipLocked: true,
  advisoryLocks: true,
  returning: true,
  // PGlite is PostgreSQL inside this process: no other process or server can open its database.
  multiProcess: false,
});
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * PGlite (PostgreSQL compiled to WebAssembly, in this process) under the one SQL store: the
 * PostgreSQL driver's statements and transactions, over PGlite's single connection lent to one
 * transaction at a time.
 */
export class PgliteDriver implements SqlDriver {
  readonly name = 'pglite';
  readonly capabilities = CAPABILITIES;
  readonly preview = POSTGRES_PREVIEW_SQL;
  readonly #postgres: PostgresDriver;
  readonly #database: Promise<PgliteDatabase>;
  readonly #ownDatabase: boolean;
  #closed = false;

  constructor(options: PgliteStoreOptions = {}) {
    const { dataDir, database, schema } = options;
    if (dataDir !== undefined && database !== undefined)
      throw new ConfigurationError('PgliteStore: pass `dataDir` or `database`, not both');
    if (dataDir !== undefined && dataDir.trim() === '')
      throw new ConfigurationError('PgliteStore: dataDir must be a directory or memory://');
    if (schema !== undefined && !SCHEMA_NAME.test(schema))
      throw new ConfigurationError(`PgliteStore: schema "${schema}" must be lowercase letters, digits and _`);
    this.#ownDatabase = database === undefined;
    this.#database = database ? Promise.resolve(database) : openPglite(dataDir ?? 'memory://');
    // A missing package or a bad directory surfaces on first use, not as an unhandled rejection now.
    this.#database.catch(() => {});
    this.#postgres = new PostgresDriver({ pool: pglitePool(this.#database, schema) });
  }

  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError('the PGlite store is closed'));
    return this.#postgres.transaction(fn);
  }

  read<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError('the PGlite store is closed'));
    return this.#postgres.read(fn);
  }

  /** The PostgreSQL driver's: an advisory lock (there is one connection, but the statement is the same). */
  beforeMigrations(session: SqlSession): Promise<void> {
    return this.#postgres.beforeMigrations(session);
  }

  /** Waits for in-flight transactions, then closes the database if the store opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#postgres.close();
    if (!this.#ownDatabase) return;
    const db = await this.#database.catch(() => undefined);
    await db?.close();
  }
}
