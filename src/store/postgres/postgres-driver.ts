import { ConfigurationError } from '../../canonical/errors.js';
import { POSTGRES_PREVIEW_SQL } from '../sql-proposals.js';
import type { SqlCapabilities, SqlDriver, SqlSession } from '../sql/driver.js';
import { sql } from '../sql/sql.js';
import { StoreClosedError } from '../store-errors.js';
import { lastResult, openPgPool, type PgPool, type PgPoolClient, type PgQueryable } from './pg-driver.js';

/** Options of {@link PostgresStore}: your own pool, or a connection string for a pool the store opens. */
export interface PostgresStoreOptions {
  /** A pool you own (a `pg.Pool`, or anything with the slice in `PgPool`). The store never ends it. */
  readonly pool?: PgPool;
  /** A `postgres://` URL; the store opens its own `pg` pool (and ends it on `close()`). */
  readonly connectionString?: string;
  /** Connections in the store's own pool. Default 10. */
  readonly max?: number;
  /**
   * A schema for the tables, with the store's own pool only: `migrate()` creates it and every
   * connection uses it as `search_path`. Lowercase letters, digits and `_`. With your own pool,
   * set `search_path` on the pool instead.
   */
  readonly schema?: string;
  /** Errors of idle connections in the store's own pool (a server restart). Default: ignored; the next query reports them. */
  readonly onIdleError?: (error: Error) => void;
}

const CAPABILITIES: SqlCapabilities = Object.freeze({
  dialect: 'postgres',
  rowLocks: true,
  skipLocked: true,
  advisoryLocks: true,
  returning: true,
  multiProcess: true,
});
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
// First key of the two-key advisory lock that serializes migrations ('csmg'); the second is the schema's hash.
const MIGRATION_LOCK = 0x63736d67;
// PostgreSQL aborts one of two deadlocked transactions (40P01); 40001 is a serialization failure.
// Both mean "nothing was written, run it again".
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_TRIES = 5;

/**
 * `pg` (or PGlite, or anything with the `PgPool` slice) under the one SQL store. Each transaction
 * holds one pooled connection (`BEGIN` … `COMMIT`, READ COMMITTED) and runs again after a
 * deadlock or serialization failure; reads run in autocommit on one connection.
 */
export class PostgresDriver implements SqlDriver {
  readonly name = 'postgres';
  readonly capabilities = CAPABILITIES;
  readonly preview = POSTGRES_PREVIEW_SQL;
  readonly #ownPool: boolean;
  readonly #schema: string | undefined;
  readonly #inFlight = new Set<Promise<unknown>>();
  #pool: PgPool | Promise<PgPool>;
  #closed = false;

  constructor(options: PostgresStoreOptions) {
    const { pool, connectionString, schema } = options;
    if ((pool === undefined) === (connectionString === undefined)) {
      throw new ConfigurationError('PostgresStore: pass exactly one of `pool` or `connectionString`');
    }
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
      throw new ConfigurationError(
        `PostgresStore: schema "${schema}" must be lowercase letters, digits and _`,
      );
    }
    if (pool && (schema !== undefined || options.max !== undefined)) {
      throw new ConfigurationError(
        'PostgresStore: `schema` and `max` apply to the store’s own pool; configure your pool instead',
      );
    }
    const max = options.max ?? 10;
    if (!Number.isInteger(max) || max < 1)
      throw new ConfigurationError('PostgresStore: max must be a positive integer');
    this.#schema = schema;
    this.#ownPool = pool === undefined;
    this.#pool =
      pool ??
      openPgPool(
        {
          connectionString: connectionString!,
          max,
          application_name: 'countersign',
          ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
        },
        options.onIdleError ?? (() => {}),
      );
    // A failed dynamic import surfaces on first use; do not let it become an unhandled rejection now.
    if (this.#pool instanceof Promise) this.#pool.catch(() => {});
  }

  async #connect(): Promise<PgPoolClient> {
    if (this.#closed) throw new StoreClosedError('the PostgreSQL store is closed');
    this.#pool = await this.#pool;
    return this.#pool.connect();
  }

  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.#track(async () => {
      for (let tries = 1; ; tries++) {
        const client = await this.#connect();
        let broken: Error | undefined;
        try {
          await client.query('BEGIN');
          const result = await fn(sessionOf(client));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          broken = await rollback(client);
          if (tries < MAX_TRIES && !broken && RETRYABLE.has(sqlState(error))) {
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * tries));
            continue;
          }
          throw error;
        } finally {
          client.release(broken);
        }
      }
    });
  }

  read<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.#track(async () => {
      const client = await this.#connect();
      try {
        return await fn(sessionOf(client));
      } finally {
        client.release();
      }
    });
  }

  /** Serializes migrations across instances (advisory lock per schema) and creates the schema. */
  async beforeMigrations(session: SqlSession): Promise<void> {
    const schema = this.#schema ?? null;
    await session.run(
      sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}, hashtext(coalesce(${schema}::text, current_schema()::text, '')))`,
    );
    if (this.#schema !== undefined) await session.exec(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`);
  }

  /** Waits for in-flight transactions, then ends the pool if the store opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
    if (this.#ownPool) {
      const pool = await Promise.resolve(this.#pool).catch(() => undefined);
      await pool?.end();
    }
  }

  #track<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError('the PostgreSQL store is closed'));
    const running = work();
    this.#inFlight.add(running);
    const done = () => this.#inFlight.delete(running);
    running.then(done, done);
    return running;
  }
}

function sessionOf(client: PgQueryable): SqlSession {
  const query = async (text: string, values: readonly unknown[]) =>
    lastResult(await client.query(text, values.length > 0 ? [...values] : undefined));
  return {
    all: async (q) => {
      const { text, values } = q.render('postgres');
      return (await query(text, values)).rows;
    },
    run: async (q) => {
      const { text, values } = q.render('postgres');
      return { changes: (await query(text, values)).rowCount ?? 0 };
    },
    native: async (text, values) => {
      const result = await query(text, values);
      return { rows: result.rows, changes: result.rowCount ?? 0 };
    },
    exec: async (script) => {
      await client.query(script);
    },
  };
}

function sqlState(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : '';
}

/** Rolls back; returns the error when the connection is unusable (it is then destroyed, not pooled). */
async function rollback(client: PgPoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
