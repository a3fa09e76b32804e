import { POSTGRES_MIGRATIONS } from '../postgres/migrations.js';
import { type MigrationReport, SqlStore } from '../sql/sql-store.js';
import { PgliteDriver, type PgliteStoreOptions } from './pglite-driver.js';

export type { MigrationReport, PgliteStoreOptions };

/**
 * The PGlite store: PostgreSQL compiled to WebAssembly, inside this process, for machines
 * without a PostgreSQL server (a laptop, CI, a single-process app) that want PostgreSQL's
 * behaviour. The same statements and migrations as the PostgreSQL store; its database lives in a
 * directory (or in memory) and only this process can open it, so it is not for several instances.
 *
 * `@electric-sql/pglite` is an optional peer dependency: install it to use this store.
 *
 * @example
 * const store = new PgliteStore({ dataDir: './countersign-data' }); // or {} for in memory
 * const engine = await createEngine({ store, operations: [payInvoice] });
 */
export class PgliteStore extends SqlStore {
  constructor(options: PgliteStoreOptions = {}) {
    super(new PgliteDriver(options), POSTGRES_MIGRATIONS);
  }
}
