// The one way a suite runs on every database: `for (const backend of BACKENDS)` or
// `describe.each(BACKENDS)`, then per case a fresh database from `createBackend` (a migrated
// store, raw SQL beside it, a location a child process can open), a bare store from `storeOn`, or
// an engine from `harnessOn` (support/engine.ts), which is built on `storeOn`.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Store } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { type TestPostgres, testPostgres } from './postgres.js';

/** A database a suite runs on. */
export type BackendName = 'sqlite' | 'postgres';

/** Raw SQL on a backend's own connection, beside the store (`?` placeholders on every backend). */
export interface RawSql {
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  all(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** One fresh, empty database of a backend: a SQLite file, or a PostgreSQL schema of its own. */
export interface Backend {
  readonly name: BackendName;
  /**
   * What a child process is given to open the same store: a file path or a PostgreSQL URL. The
   * embedded PGlite lives in this process only: its location opens nothing elsewhere.
   */
  readonly location: string;
  /** Opens (and migrates) a store on this database. */
  open(): Promise<Store>;
  /** A raw connection for tampering and counting rows. */
  sql(): Promise<RawSql>;
  /** Drops the schema (or deletes the file) and everything beside it. */
  dispose(): Promise<void>;
}

const PG_URL = process.env['COUNTERSIGN_TEST_PG_URL'] || undefined;

/**
 * Why PostgreSQL runs that start other processes are skipped: without a server, PostgreSQL is
 * the embedded PGlite, which lives in this process only. Undefined when they run.
 */
export const POSTGRES_UNAVAILABLE: string | undefined = PG_URL
  ? undefined
  : 'child processes need a server: COUNTERSIGN_TEST_PG_URL is not set (PGlite lives in this process)';

/** Every backend: SQLite, and PostgreSQL (the server at COUNTERSIGN_TEST_PG_URL, or else embedded PGlite). */
export const BACKENDS: readonly BackendName[] = ['sqlite', 'postgres'];

/** {@link BACKENDS} for suites whose work runs in child processes, each with the reason it is skipped (if it is). */
export const PROCESS_BACKENDS: readonly { readonly name: BackendName; readonly skip: string | undefined }[] =
  BACKENDS.map((name) => ({ name, skip: name === 'postgres' ? POSTGRES_UNAVAILABLE : undefined }));

/** True when PostgreSQL runs on the embedded PGlite (no server given): slower, in this process only. */
export const EMBEDDED_POSTGRES = PG_URL === undefined;

/** The file's PostgreSQL test backend, opened on first use (the embedded PGlite takes seconds to start). */
let embedded: TestPostgres | undefined;
const postgres = (): TestPostgres => {
  embedded ??= testPostgres();
  return embedded;
};

/**
 * Starts a backend before its first test: the embedded PGlite takes seconds to start, paid once
 * per file in a hook (`beforeAll(() => warmUp(backend), 120_000)`), not inside a test's timeout.
 */
export async function warmUp(backend: BackendName): Promise<void> {
  if (backend === 'sqlite') return;
  const pg = postgres();
  const schema = pg.newSchema();
  await (await pg.store({ schema })).close();
  await pg.dropSchema(schema);
}

/**
 * A fresh, unmigrated store on a backend, for suites that build their own engine: a SQLite file in
 * a temp dir, or a PostgreSQL schema of its own. `dispose` (after the store is closed) removes it.
 */
export async function storeOn(
  backend: BackendName,
): Promise<{ readonly store: Store; readonly dispose: () => Promise<void> }> {
  if (backend === 'sqlite') {
    const { dir, remove } = scratchDir('test');
    return { store: new SqliteStore({ path: join(dir, 'test.db') }), dispose: async () => remove() };
  }
  const pg = postgres();
  const schema = pg.newSchema();
  return { store: await pg.store({ schema }), dispose: () => pg.dropSchema(schema) };
}

/** Opens the store at a location: a PostgreSQL URL (`?schema=` honoured), or else a SQLite file path. Not migrated. */
export function openStoreAt(location: string): Promise<Store> {
  return openStore(location);
}

interface SqliteConnection {
  prepare(sql: string): { run(...p: unknown[]): { changes: number }; all(...p: unknown[]): unknown[] };
  pragma(source: string): unknown;
  close(): void;
}

function sqliteRaw(path: string): RawSql {
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (
    p: string,
    o?: { timeout?: number },
  ) => SqliteConnection;
  const db = new Database(path, { timeout: 10_000 });
  db.pragma('busy_timeout = 10000');
  return {
    run: async (sql, params = []) => db.prepare(sql).run(...params).changes,
    all: async (sql, params = []) => db.prepare(sql).all(...params) as Record<string, unknown>[],
    close: async () => db.close(),
  };
}

function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

async function postgresRaw(url: string, schema: string): Promise<RawSql> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  return {
    run: async (sql, params = []) => (await client.query(numbered(sql), [...params])).rowCount ?? 0,
    all: async (sql, params = []) =>
      (await client.query(numbered(sql), [...params])).rows as Record<string, unknown>[],
    close: () => client.end(),
  };
}

/** Creates a fresh, empty database on a backend. PostgreSQL: a database of its own per call. */
export async function createBackend(name: BackendName): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), `countersign-reliability-${name}-`));
  if (name === 'sqlite') {
    const path = join(dir, 'store.db');
    return {
      name,
      location: path,
      open: async () => {
        const store = await openStoreAt(path);
        await store.migrate();
        return store;
      },
      sql: async () => sqliteRaw(path),
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (!PG_URL) return embeddedBackend(dir);
  // A schema of its own per database made here: parallel files and cases never meet.
  const schema = `cs_rel_${randomBytes(6).toString('hex')}`;
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  const location = url.toString();
  return {
    name,
    location,
    open: async () => {
      const store = await openStoreAt(location);
      await store.migrate();
      return store;
    },
    sql: () => postgresRaw(PG_URL, schema),
    dispose: async () => {
      rmSync(dir, { recursive: true, force: true });
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A scratch directory beside a backend's database, removed by the caller. */
export function scratchDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `countersign-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** PostgreSQL in this process (PGlite): a schema of its own per database made here. */
async function embeddedBackend(dir: string): Promise<Backend> {
  const pglite = postgres();
  const schema = pglite.newSchema();
  const pool = await pglite.embeddedPool!(schema);
  return {
    name: 'postgres',
    // Not a store location: the database is this process's embedded one, shared by schema.
    location: `(embedded PGlite, schema ${schema})`,
    open: async () => {
      const store = await pglite.store({ schema });
      await store.migrate();
      return store;
    },
    sql: async () => ({
      run: async (sql, params = []) => (await pool.query(numbered(sql), [...params])).rowCount ?? 0,
      all: async (sql, params = []) => (await pool.query(numbered(sql), [...params])).rows,
      close: async () => {},
    }),
    dispose: async () => {
      rmSync(dir, { recursive: true, force: true });
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  };
}
