export { POSTGRES_MIGRATIONS, type PostgresMigration } from './migrations.js';
export type { PgPool, PgPoolClient, PgQueryable, PgQueryResult } from './pg-driver.js';
export type { PostgresTimeouts } from './postgres-driver.js';
export {
  type MigrationReport,
  PostgresStore,
  type PostgresStoreOptions,
  StoreClosedError,
} from './postgres-store.js';
export { UnstorableValueError } from '../unstorable-value.js';

import { PostgresStore, type PostgresStoreOptions } from './postgres-store.js';

/**
 * Opens the PostgreSQL store (`postgresStore({ connectionString: 'postgres://…' })` or
 * `postgresStore({ pool })`). Call `migrate()` or let `createEngine` do it.
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  return new PostgresStore(options);
}
