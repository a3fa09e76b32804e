import { ConfigurationError } from '../../canonical/errors.js';
import { POSTGRES_PREVIEW_SQL } from '../sql-proposals.js';
import type { SqlCapabilities, SqlDriver, SqlSession } from '../sql/driver.js';
import { sql } from '../../sql/sql.js';
import { StoreClosedError } from '../store-errors.js';
import { asStoreFault, storeFaultCondition } from '../store-fault.js';
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
  /** Deadlines of the store's own pool; each has a default (see {@link PostgresTimeouts}). */
  readonly timeouts?: PostgresTimeouts;
}

/**
 * How long the store waits on PostgreSQL before answering `store_unavailable` instead of hanging
 * (with the store's own pool; with your own pool, set `connectionTimeoutMillis`,
 * `statement_timeout` and `query_timeout` on it). A request makes several statements, so keep the
 * HTTP request deadline above `statementMs`.
 */
export interface PostgresTimeouts {
  /** Opening a connection, or waiting for a free one in the pool. Default 5 000 ms. */
  readonly connectMs?: number;
  /**
   * One statement, waiting for locks included. PostgreSQL cancels it after this long; the client
   * gives up 2 s later if the server does not answer at all (paused, or gone without a word).
   * Default 10 000 ms.
   */
  readonly statementMs?: number;
}

/** Default of {@link PostgresTimeouts.connectMs}. */
export const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;
/** Default of {@link PostgresTimeouts.statementMs}. */
export const POSTGRES_STATEMENT_TIMEOUT_MS = 10_000;
// The server's own statement timeout answers first while the server is alive; this margin is
// how much later the client stops waiting for one that is not.
const CLIENT_TIMEOUT_MARGIN_MS = 2_000;

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
    if (pool && options.timeouts !== undefined)
      throw new ConfigurationError(
        'PostgresStore: `timeouts` apply to the store’s own pool; set connectionTimeoutMillis, statement_timeout and query_timeout on your pool instead',
      );
    const connectMs = positiveMs(
      'timeouts.connectMs',
      options.timeouts?.connectMs,
      POSTGRES_CONNECT_TIMEOUT_MS,
    );
    const statementMs = positiveMs(
      'timeouts.statementMs',
      options.timeouts?.statementMs,
      POSTGRES_STATEMENT_TIMEOUT_MS,
    );
    this.#schema = schema;
    this.#ownPool = pool === undefined;
    this.#pool =
      pool ??
      openPgPool(
        {
          connectionString: connectionString!,
          max,
          application_name: 'countersign',
          connectionTimeoutMillis: connectMs,
          statement_timeout: statementMs,
          lock_timeout: statementMs,
          idle_in_transaction_session_timeout: statementMs * 3,
          query_timeout: statementMs + CLIENT_TIMEOUT_MARGIN_MS,
          keepAlive: true,
          ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
        },
        options.onIdleError ?? (() => {}),
      );
    // A failed dynamic import surfaces on first use; do not let it become an unhandled rejection now.
    if (this.#pool instanceof Promise) this.#pool.catch(() => {});
  }

  /** A pooled connection that hears its own death while held: see {@link Checkout}. */
  async #connect(): Promise<Checkout> {
    if (this.#closed) throw new StoreClosedError('the PostgreSQL store is closed');
    try {
      this.#pool = await this.#pool;
      return new Checkout(await this.#pool.connect());
    } catch (error) {
      throw asStoreFault(error);
    }
  }

  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.#track(async () => {
      for (let tries = 1; ; tries++) {
        const held = await this.#connect();
        try {
          await held.client.query('BEGIN');
          const result = await fn(sessionOf(held.client));
          await held.client.query('COMMIT');
          return result;
        } catch (error) {
          // A connection that died or stopped answering is destroyed, not rolled back: the
          // server rolls back a transaction whose connection is gone.
          if (held.died === undefined && connectionLost(error)) held.died = asError(error);
          if (held.died === undefined) held.died = await rollback(held.client);
          if (tries < MAX_TRIES && held.died === undefined && RETRYABLE.has(sqlState(error))) {
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * tries));
            continue;
          }
          throw asStoreFault(error);
        } finally {
          held.release();
        }
      }
    });
  }

  read<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.#track(async () => {
      const held = await this.#connect();
      try {
        return await fn(sessionOf(held.client));
      } catch (error) {
        if (held.died === undefined && connectionLost(error)) held.died = asError(error);
        throw asStoreFault(error);
      } finally {
        held.release();
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

/**
 * One connection checked out of the pool. `pg` emits `'error'` on a held connection whose socket
 * dies (a server restart, a terminated backend); without a listener that event ends the process.
 * The listener notes it, the statement in flight fails on its own, and the connection is
 * destroyed on release instead of going back to the pool.
 */
class Checkout {
  readonly client: PgPoolClient;
  /** Why the connection must not be reused; undefined while it is sound. */
  died: Error | undefined;
  readonly #onError = (error: Error) => {
    this.died ??= error;
  };

  constructor(client: PgPoolClient) {
    this.client = client;
    client.on?.('error', this.#onError);
  }

  release(): void {
    this.client.removeListener?.('error', this.#onError);
    this.client.release(this.died);
  }
}

function positiveMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigurationError(`PostgresStore: ${name} must be a positive whole number of ms`);
  return value;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

// The connection itself is gone or unanswering (not a statement the server refused): a client
// side timeout, a dead socket. Such a connection must not run a ROLLBACK or go back to the pool.
function connectionLost(error: unknown): boolean {
  const condition = storeFaultCondition(error);
  return (condition === 'unreachable' || condition === 'timeout') && !/^[0-9A-Z]{5}$/.test(sqlState(error));
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
