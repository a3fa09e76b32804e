import { ConfigurationError } from '../../canonical/errors.js';
import type { PgPool, PgPoolClient, PgQueryResult } from '../postgres/pg-driver.js';

// The slice of PGlite (`@electric-sql/pglite`) this backend uses, declared here so neither the
// core nor a user's type check needs PGlite's types. A `PGlite` instance satisfies it as is.

/** What one PGlite statement returns. */
export interface PgliteResult {
  readonly rows: readonly unknown[];
  /** Rows a statement changed or returned (per statement). */
  readonly rowCount?: number;
  /** Rows changed (cumulative over a script). */
  readonly affectedRows?: number;
}

/** The slice of a `PGlite` database the PGlite store uses. */
export interface PgliteDatabase {
  /** One statement with `$1…$n` parameters. */
  query(text: string, params?: unknown[]): Promise<PgliteResult>;
  /** A script of statements without parameters; one result per statement. */
  exec(text: string): Promise<readonly PgliteResult[]>;
  close(): Promise<void>;
}

type PgliteModule = {
  readonly PGlite: { create(dataDir?: string): Promise<PgliteDatabase> };
};

// A variable specifier keeps the compiler from resolving PGlite's types: it is an optional peer
// dependency, loaded only when a PGlite store opens its own database.
const PGLITE_MODULE = '@electric-sql/pglite';

/**
 * Opens a PGlite database at `dataDir` (a directory, or `memory://` for a throwaway one) with a
 * dynamic import of the optional `@electric-sql/pglite` peer dependency.
 */
export async function openPglite(dataDir: string): Promise<PgliteDatabase> {
  let loaded: Partial<PgliteModule>;
  try {
    loaded = (await import(PGLITE_MODULE)) as Partial<PgliteModule>;
  } catch (error) {
    throw new ConfigurationError(
      'the PGlite store needs the "@electric-sql/pglite" package: npm install @electric-sql/pglite',
      { cause: error },
    );
  }
  if (!loaded.PGlite)
    throw new ConfigurationError('the "@electric-sql/pglite" package does not export PGlite');
  return loaded.PGlite.create(dataDir);
}

/** Serializes work on PGlite's one connection: a checked-out client holds it until released. */
class ConnectionLock {
  #tail: Promise<void> = Promise.resolve();
  /** The schema `search_path` names now (undefined: not set here). */
  searchPath: string | undefined;

  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const acquired = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => held);
    return acquired;
  }
}

// One lock per database, whichever pools share it: PGlite has a single connection, so a
// transaction of one store must keep every other store on the same database waiting.
const LOCKS = new WeakMap<PgliteDatabase, ConnectionLock>();

function lockOf(db: PgliteDatabase): ConnectionLock {
  let lock = LOCKS.get(db);
  if (!lock) {
    lock = new ConnectionLock();
    LOCKS.set(db, lock);
  }
  return lock;
}

// PGlite runs one statement per parameterized query; a text without parameters may hold several
// (as with pg's simple protocol), so it goes through exec and the last result counts.
async function run(db: PgliteDatabase, text: string, values: unknown[] | undefined): Promise<PgQueryResult> {
  const result = values && values.length > 0 ? await db.query(text, values) : (await db.exec(text)).at(-1);
  if (!result) return { rows: [], rowCount: 0 };
  const rows = result.rows as Record<string, unknown>[];
  return { rows, rowCount: result.rowCount ?? result.affectedRows ?? rows.length };
}

/**
 * PGlite as the `pg` pool slice the PostgreSQL driver runs on: one connection, lent to one client
 * at a time. With `schema`, every client first creates it if missing and sets it as `search_path`
 * (so several stores can share one database, each in its own schema). `end()` does nothing: the
 * database's owner closes it.
 */
export function pglitePool(database: Promise<PgliteDatabase>, schema: string | undefined): PgPool {
  const connect = async (): Promise<PgPoolClient> => {
    const db = await database;
    const lock = lockOf(db);
    const release = await lock.acquire();
    try {
      if (schema !== undefined && lock.searchPath !== schema) {
        await run(db, `CREATE SCHEMA IF NOT EXISTS "${schema}"; SET search_path TO "${schema}"`, undefined);
        lock.searchPath = schema;
      } else if (schema === undefined && lock.searchPath !== undefined) {
        await run(db, 'SET search_path TO DEFAULT', undefined);
        lock.searchPath = undefined;
      }
    } catch (error) {
      release();
      throw error;
    }
    let released = false;
    return {
      query: (text, values) => run(db, text, values),
      release: () => {
        if (released) return;
        released = true;
        release();
      },
    };
  };
  return {
    connect,
    query: async (text, values) => {
      const client = await connect();
      try {
        return await client.query(text, values);
      } finally {
        client.release();
      }
    },
    end: async () => {},
  };
}
