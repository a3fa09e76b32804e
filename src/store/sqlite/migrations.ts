import { type MigrationDialect, migrationsFor } from '../sql/migrations.js';

/** How SQLite spells what {@link MigrationDialect} names. */
const SQLITE: MigrationDialect = Object.freeze({
  name: 'sqlite',
  key: 'TEXT',
  bigint: 'INTEGER',
  clustered: ' WITHOUT ROWID',
  serialKey: 'INTEGER PRIMARY KEY AUTOINCREMENT',
  nowSeconds: "CAST(strftime('%s', 'now') AS INTEGER)",
});

/**
 * The versioned schema migrations (src/store/sql/migrations.ts) as the SQLite store runs them: one
 * script per version. Never edit a released one: add the next to the shared list.
 */
export const SQLITE_MIGRATIONS: readonly {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}[] = migrationsFor(SQLITE).map((m) => ({
  version: m.version,
  name: m.name,
  sql: `${m.statements.join(';\n')};`,
}));
