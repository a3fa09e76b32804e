import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LocalTransaction } from '../../src/operation/define-operation.js';
import { PgliteDriver } from '../../src/store/pglite/pglite-driver.js';
import { openPglite, type PgliteDatabase } from '../../src/store/pglite/pglite-pool.js';
import { PgliteStore } from '../../src/store/pglite/index.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/index.js';
import { PostgresDriver } from '../../src/store/postgres/postgres-driver.js';
import type { SqlDriver } from '../../src/store/sql/driver.js';
import { type SqlMigration, SqlStore } from '../../src/store/sql/sql-store.js';
import { SqliteDriver } from '../../src/store/sqlite/sqlite-driver.js';
import { SQLITE_MIGRATIONS, SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/engine.js';
import { TEST_PG_URL, testPostgres } from '../support/postgres.js';

// Every dialect's migrations, applied to an empty database, must leave the same schema: the same
// tables and columns (name, nullability, type family), primary keys, unique constraints and
// indexes (name, columns, uniqueness, partial predicate). Each schema is rendered as lines of
// text, so a difference reads as a diff of the two renderings.

interface Column {
  readonly name: string;
  readonly notNull: boolean;
  readonly type: string;
}

interface Index {
  readonly name: string;
  readonly table: string;
  readonly columns: readonly string[];
  readonly unique: boolean;
  readonly where: string | undefined;
}

interface Schema {
  readonly tables: ReadonlyMap<string, readonly Column[]>;
  readonly primaryKeys: ReadonlyMap<string, readonly string[]>;
  /** Unique constraints (not indexes made by CREATE INDEX): `table (columns)`. */
  readonly uniques: readonly string[];
  readonly indexes: readonly Index[];
}

/** INTEGER and BIGINT (and PostgreSQL's int4, int8, bigserial) are one family, as are the text types. */
function typeFamily(declared: string): string {
  const t = declared.toLowerCase();
  if (/int|serial/.test(t)) return 'integer';
  if (/char|text|clob/.test(t)) return 'text';
  return t;
}

/** A partial index's predicate without PostgreSQL's casts, parentheses and case. */
function predicate(where: string | null | undefined): string | undefined {
  if (!where) return undefined;
  return where
    .replace(/::[a-z ]+/gi, '')
    .replace(/[()]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

const str = (v: unknown) => String(v);

async function sqliteSchema(tx: LocalTransaction): Promise<Schema> {
  const tables = new Map<string, Column[]>();
  const primaryKeys = new Map<string, string[]>();
  const uniques: string[] = [];
  const indexes: Index[] = [];
  const names = await tx.all(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'countersign_%' ORDER BY name",
  );
  for (const { name: table } of names) {
    const columns = await tx.all('SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid', [
      table,
    ]);
    // A rowid table's PRIMARY KEY column may hold NULL in SQLite (a historical quirk): count a
    // key column as NOT NULL, as PostgreSQL makes it.
    tables.set(
      str(table),
      columns.map((c) => ({
        name: str(c['name']),
        notNull: Number(c['notnull']) === 1 || Number(c['pk']) > 0,
        type: typeFamily(str(c['type'])),
      })),
    );
    primaryKeys.set(
      str(table),
      columns
        .filter((c) => Number(c['pk']) > 0)
        .sort((a, b) => Number(a['pk']) - Number(b['pk']))
        .map((c) => str(c['name'])),
    );
    for (const index of await tx.all('SELECT name, "unique", origin FROM pragma_index_list(?)', [table])) {
      const cols = (
        await tx.all('SELECT name FROM pragma_index_info(?) ORDER BY seqno', [index['name']])
      ).map((c) => str(c['name']));
      if (index['origin'] === 'pk') continue;
      if (index['origin'] === 'u') {
        uniques.push(`${str(table)} (${cols.join(', ')})`);
        continue;
      }
      const [definition] = await tx.all("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", [
        index['name'],
      ]);
      const where = /\sWHERE\s(.*)$/is.exec(str(definition?.['sql']))?.[1];
      indexes.push({
        name: str(index['name']),
        table: str(table),
        columns: cols,
        unique: Number(index['unique']) === 1,
        where: predicate(where),
      });
    }
  }
  return { tables, primaryKeys, uniques, indexes };
}

async function postgresSchema(tx: LocalTransaction): Promise<Schema> {
  const tables = new Map<string, Column[]>();
  const primaryKeys = new Map<string, string[]>();
  const columns = await tx.all(
    `SELECT table_name, column_name, is_nullable, data_type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name LIKE 'countersign\\_%' ORDER BY table_name, ordinal_position`,
  );
  for (const c of columns) {
    const table = str(c['table_name']);
    const list = tables.get(table) ?? [];
    list.push({
      name: str(c['column_name']),
      notNull: c['is_nullable'] === 'NO',
      type: typeFamily(str(c['data_type'])),
    });
    tables.set(table, list);
  }
  // Constraints and indexes with their columns in key order.
  const keyColumns = (relation: string, numbers: string) =>
    `ARRAY(SELECT a.attname FROM unnest(${numbers}) WITH ORDINALITY k(n, o)
       JOIN pg_attribute a ON a.attrelid = ${relation} AND a.attnum = k.n ORDER BY k.o)::text[]`;
  const constraints = await tx.all(
    `SELECT t.relname AS table_name, c.contype, ${keyColumns('c.conrelid', 'c.conkey')} AS columns
     FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
     WHERE t.relnamespace = current_schema()::regnamespace AND c.contype IN ('p', 'u') AND t.relname LIKE 'countersign\\_%'`,
  );
  const uniques: string[] = [];
  for (const c of constraints) {
    const cols = (c['columns'] as string[]).map(str);
    if (c['contype'] === 'p') primaryKeys.set(str(c['table_name']), cols);
    else uniques.push(`${str(c['table_name'])} (${cols.join(', ')})`);
  }
  for (const table of tables.keys()) if (!primaryKeys.has(table)) primaryKeys.set(table, []);
  const indexRows = await tx.all(
    `SELECT i.relname AS name, t.relname AS table_name, x.indisunique AS is_unique,
       pg_get_expr(x.indpred, x.indrelid) AS predicate, ${keyColumns('x.indrelid', 'x.indkey::int2[]')} AS columns
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
     WHERE t.relnamespace = current_schema()::regnamespace AND t.relname LIKE 'countersign\\_%'
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.conrelid = x.indrelid)`,
  );
  const indexes = indexRows.map((r) => ({
    name: str(r['name']),
    table: str(r['table_name']),
    columns: (r['columns'] as string[]).map(str),
    unique: r['is_unique'] === true,
    where: predicate(r['predicate'] as string | null),
  }));
  return { tables, primaryKeys, uniques, indexes };
}

/** One line per fact, sorted, so two renderings compare as a readable diff. */
function render(schema: Schema): string {
  const lines: string[] = [];
  for (const [table, columns] of schema.tables) {
    lines.push(`table ${table} primary key (${(schema.primaryKeys.get(table) ?? []).join(', ')})`);
    for (const c of columns)
      lines.push(`table ${table} column ${c.name} ${c.type}${c.notNull ? ' not null' : ''}`);
  }
  for (const u of schema.uniques) lines.push(`unique ${u}`);
  for (const i of schema.indexes) {
    const where = i.where === undefined ? '' : ` where ${i.where}`;
    lines.push(
      `${i.unique ? 'unique index' : 'index'} ${i.name} on ${i.table} (${i.columns.join(', ')})${where}`,
    );
  }
  return `${lines.sort().join('\n')}\n`;
}

async function migratedSchema(
  store: Store & { migrate(): Promise<void> },
  read: (tx: LocalTransaction) => Promise<Schema>,
): Promise<string> {
  try {
    await store.migrate();
    return render(await store.transaction((tx) => read(tx.local)));
  } finally {
    await store.close();
  }
}

/** Migrates with the list a release of `version` had: what a database made then holds. */
async function migrateTo(driver: SqlDriver, migrations: readonly SqlMigration[], version: number) {
  const older = new SqlStore(
    driver,
    migrations.filter((m) => m.version <= version),
  );
  await older.migrate();
  await older.close();
}

const SQLITE = SQLITE_MIGRATIONS.map((m) => ({ version: m.version, name: m.name, statements: [m.sql] }));
const LAST = SQLITE_MIGRATIONS.at(-1)!.version;

describe('every dialect migrates to one schema', () => {
  const { dir, cleanup } = tempDir();
  const server = testPostgres();
  // One embedded database for both PGlite cases, a schema each: it takes seconds to start.
  let embedded: Promise<PgliteDatabase> | undefined;
  const pglite = () => {
    embedded ??= openPglite('memory://');
    return embedded;
  };
  afterAll(async () => {
    cleanup();
    if (embedded) await (await embedded).close();
    if (TEST_PG_URL) await server.cleanup();
  });

  let fresh: Promise<string> | undefined;
  const sqliteRendering = () => {
    fresh ??= migratedSchema(new SqliteStore({ path: join(dir, 'fresh.db') }), sqliteSchema);
    return fresh;
  };

  it('SQLite has the tables and indexes the stores query (the rendering is not empty)', async () => {
    const rendering = await sqliteRendering();
    expect(rendering).toContain('table countersign_proposals primary key (id)');
    expect(rendering).toContain(
      'index countersign_grants_by_subject on countersign_grants (tenant, subject, created_at)',
    );
  });

  it('SQLite: a file made at each earlier version and migrated on has the schema of a fresh one', async () => {
    for (let version = 1; version < LAST; version++) {
      const path = join(dir, `v${version}.db`);
      await migrateTo(new SqliteDriver({ path }), SQLITE, version);
      const upgraded = await migratedSchema(new SqliteStore({ path }), sqliteSchema);
      expect(upgraded, `made at version ${version}`).toBe(await sqliteRendering());
    }
  });

  it('embedded PGlite and SQLite', async () => {
    const rendering = await migratedSchema(
      new PgliteStore({ database: await pglite(), schema: 'fresh' }),
      postgresSchema,
    );
    expect(rendering).toBe(await sqliteRendering());
  });

  it(`embedded PGlite made at version ${LAST - 1} and migrated on, and SQLite`, async () => {
    const database = await pglite();
    await migrateTo(new PgliteDriver({ database, schema: 'upgraded' }), POSTGRES_MIGRATIONS, LAST - 1);
    const rendering = await migratedSchema(new PgliteStore({ database, schema: 'upgraded' }), postgresSchema);
    expect(rendering).toBe(await sqliteRendering());
  });

  it.skipIf(!TEST_PG_URL)(
    TEST_PG_URL
      ? `the real PostgreSQL server (${server.label}), fresh and made at version ${LAST - 1}, and SQLite`
      : 'the real PostgreSQL server and SQLite: skipped, COUNTERSIGN_TEST_PG_URL is not set',
    async () => {
      const rendering = await migratedSchema(await server.store(), postgresSchema);
      expect(rendering).toBe(await sqliteRendering());
      const schema = server.newSchema();
      await migrateTo(
        new PostgresDriver({ connectionString: TEST_PG_URL!, schema }),
        POSTGRES_MIGRATIONS,
        LAST - 1,
      );
      const upgraded = await migratedSchema(await server.store({ schema }), postgresSchema);
      expect(upgraded, `made at version ${LAST - 1}`).toBe(await sqliteRendering());
    },
  );
});
