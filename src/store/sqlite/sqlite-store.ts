import { SqlStore } from '../sql/sql-store.js';
import { type SqliteDatabase, SqliteDriver, type SqliteStoreOptions } from './sqlite-driver.js';
import { SQLITE_MIGRATIONS } from './migrations.js';

export type { SqliteDatabase, SqliteStoreOptions };

const MIGRATIONS = SQLITE_MIGRATIONS.map((m) => ({ version: m.version, name: m.name, statements: [m.sql] }));

/**
 * The embedded default store: one SQLite file in WAL mode through better-sqlite3. Several
 * processes may share the file; every write transaction is `BEGIN IMMEDIATE`, so a claim is one
 * atomic compare-and-set across them.
 *
 * @example
 * const store = new SqliteStore({ path: 'app.db' });
 * const engine = await createEngine({ store, operations: [payInvoice] });
 */
export class SqliteStore extends SqlStore {
  readonly #driver: SqliteDriver;

  constructor(options: SqliteStoreOptions = {}) {
    const driver = new SqliteDriver(options);
    super(driver, MIGRATIONS);
    this.#driver = driver;
  }

  /** The underlying connection, for the application's own local-effect tables. */
  get database(): SqliteDatabase {
    return this.#driver.database;
  }
}
