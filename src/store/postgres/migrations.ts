import { type MigrationDialect, migrationsFor } from '../sql/migrations.js';
import type { SqlMigration } from '../sql/sql-store.js';

/** One versioned schema migration of the PostgreSQL store: statements applied in one transaction. */
export type PostgresMigration = SqlMigration;

/** How PostgreSQL (and PGlite) spell what {@link MigrationDialect} names. */
const POSTGRES: MigrationDialect = Object.freeze({
  name: 'postgres',
  key: 'TEXT COLLATE "C"',
  bigint: 'BIGINT',
  clustered: '',
  serialKey: 'BIGSERIAL PRIMARY KEY',
  nowSeconds: 'EXTRACT(EPOCH FROM now())::bigint',
});

/**
 * The versioned schema migrations (src/store/sql/migrations.ts) as the PostgreSQL and PGlite
 * stores run them. Never edit a released one: add the next to the shared list.
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = migrationsFor(POSTGRES);
