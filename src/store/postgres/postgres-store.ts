import { type MigrationReport, SqlStore } from '../sql/sql-store.js';
import { StoreClosedError } from '../store-errors.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';
import { PostgresDriver, type PostgresStoreOptions } from './postgres-driver.js';

export { StoreClosedError };
export type { MigrationReport, PostgresStoreOptions };

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
export class PostgresStore extends SqlStore {
  constructor(options: PostgresStoreOptions) {
    super(new PostgresDriver(options), POSTGRES_MIGRATIONS);
  }
}
