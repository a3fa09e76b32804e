import { ConfigurationError } from '../../canonical/errors.js';

// The slice of `pg` (node-postgres) this backend uses, declared here so neither the core nor a
// user's type check needs pg's types. A `pg.Pool` satisfies it as is; so can any adapter.

/** What one query returns. `rowCount` is the number of rows a statement changed or returned. */
export interface PgQueryResult {
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number | null;
}

/** Something that runs one parameterized statement (`$1…$n` placeholders). */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
}

/**
 * A connection checked out of a pool; `release(error)` destroys it instead of returning it.
 * `on`/`removeListener` (a `pg.Client` has them) let the store hear the connection die while it
 * holds it: `pg` emits `'error'` then, and an `'error'` nobody listens to ends the process.
 */
export interface PgPoolClient extends PgQueryable {
  release(error?: Error | boolean): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

/** The slice of a `pg.Pool` the PostgreSQL store uses. */
export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
}

/** Options of a pool the store opens itself (a subset of `pg.PoolConfig`). */
export interface PgPoolConfig {
  readonly connectionString: string;
  readonly max: number;
  readonly options?: string;
  readonly application_name: string;
  /** How long opening a connection, or waiting for a free one, may take (ms). */
  readonly connectionTimeoutMillis: number;
  /** Server side: PostgreSQL cancels a statement running longer (ms). */
  readonly statement_timeout: number;
  /** Server side: a statement waiting longer for a lock is cancelled (ms). */
  readonly lock_timeout: number;
  /** Server side: a transaction idle longer (a worker stalled inside it) is ended, freeing its locks (ms). */
  readonly idle_in_transaction_session_timeout: number;
  /** Client side: a statement with no answer (a paused or unreachable server) fails after this long (ms). */
  readonly query_timeout: number;
  /** TCP keep-alive, so a peer that vanished is noticed on an idle connection. */
  readonly keepAlive: boolean;
}

interface OwnedPool extends PgPool {
  on(event: 'error', listener: (error: Error) => void): unknown;
}
type PgModule = { readonly Pool: new (config: PgPoolConfig) => OwnedPool };

// A variable specifier keeps the compiler from resolving pg's types: `pg` is an optional peer
// dependency, loaded only when a store opens its own pool.
const PG_MODULE = 'pg';

/**
 * Opens a `pg.Pool` with a dynamic import of the optional `pg` peer dependency. Errors of idle
 * connections (a server restart) go to `onIdleError` instead of crashing the process; the next
 * query on such a connection fails and is reported where it runs.
 */
export async function openPgPool(config: PgPoolConfig, onIdleError: (error: Error) => void): Promise<PgPool> {
  let loaded: { default?: PgModule } & Partial<PgModule>;
  try {
    loaded = (await import(PG_MODULE)) as typeof loaded;
  } catch (error) {
    throw new ConfigurationError('the PostgreSQL store needs the "pg" package: npm install pg', {
      cause: error,
    });
  }
  const Pool = loaded.Pool ?? loaded.default?.Pool;
  if (!Pool) throw new ConfigurationError('the "pg" package does not export Pool');
  const pool = new Pool(config);
  pool.on('error', onIdleError);
  return pool;
}

/** pg returns an array of results for a text of several statements; callers want the last one. */
export function lastResult(result: PgQueryResult): PgQueryResult {
  if (!Array.isArray(result)) return result;
  return (result as readonly PgQueryResult[]).at(-1) ?? { rows: [], rowCount: 0 };
}
