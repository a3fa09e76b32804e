import { StoreUnavailableError } from './store-errors.js';

/**
 * Why a store could not do its work for a while, named for logs and for the `store_unavailable`
 * answer's message. None of them is a bug: each clears by itself or by an operator's hand.
 */
export type StoreFaultCondition =
  /** The server cannot be reached, or the connection died (a restart, a crash, a terminated backend). */
  | 'unreachable'
  /** A connection, statement or lock did not answer within its deadline (a paused or overloaded server). */
  | 'timeout'
  /** Another writer holds the lock past the busy timeout (SQLite), or the server has no connection to spare. */
  | 'busy'
  /** The disk holding the database is full. */
  | 'disk_full'
  /** The database or its disk is read-only (a remount, a hot standby, file permissions). */
  | 'read_only'
  /** The disk failed a read or a write. */
  | 'io_error';

// Seconds a client should wait before trying again: a lock or a deadline clears in a moment, a
// server restart in seconds, a full or read-only disk only once someone acts.
const RETRY_AFTER: Readonly<Record<StoreFaultCondition, number>> = Object.freeze({
  unreachable: 5,
  timeout: 5,
  busy: 1,
  disk_full: 30,
  read_only: 30,
  io_error: 10,
});

const WHAT: Readonly<Record<StoreFaultCondition, string>> = Object.freeze({
  unreachable: 'the database cannot be reached',
  timeout: 'the database did not answer in time',
  busy: 'the database is busy',
  disk_full: 'the database’s disk is full',
  read_only: 'the database is read-only',
  io_error: 'the database’s disk failed',
});

/**
 * The store could not do its work for a while: the server is unreachable or stalled, the disk is
 * full or read-only, a lock was held past its timeout. Nothing was half-written (the transaction
 * rolled back). The HTTP layer answers `503 store_unavailable` with `Retry-After`.
 */
export class StoreFaultError extends StoreUnavailableError {
  readonly condition: StoreFaultCondition;
  /** Seconds to wait before trying again, as sent in `Retry-After`. */
  readonly retryAfterSeconds: number;

  constructor(condition: StoreFaultCondition, detail: string, options?: ErrorOptions) {
    super(
      `${WHAT[condition]} (${detail}); the step it was taking was rolled back; try again shortly`,
      options,
    );
    this.condition = condition;
    this.retryAfterSeconds = RETRY_AFTER[condition];
  }
}

// SQLite's primary result codes (better-sqlite3 puts the extended code, e.g. SQLITE_IOERR_WRITE,
// in `code`; its prefix is the primary one).
const SQLITE: ReadonlyArray<readonly [prefix: string, condition: StoreFaultCondition]> = [
  ['SQLITE_FULL', 'disk_full'],
  ['SQLITE_READONLY', 'read_only'],
  ['SQLITE_BUSY', 'busy'],
  ['SQLITE_LOCKED', 'busy'],
  ['SQLITE_PROTOCOL', 'busy'],
  ['SQLITE_IOERR', 'io_error'],
  ['SQLITE_CANTOPEN', 'io_error'],
];

// PostgreSQL SQLSTATEs (appendix A of its manual), by class or in full.
const SQLSTATE: ReadonlyArray<readonly [prefix: string, condition: StoreFaultCondition]> = [
  ['08', 'unreachable'], // connection exception
  ['57P01', 'unreachable'], // admin_shutdown: a restart, or the backend was terminated
  ['57P02', 'unreachable'], // crash_shutdown
  ['57P03', 'unreachable'], // cannot_connect_now: starting up or shutting down
  ['57P05', 'timeout'], // idle_session_timeout
  ['57014', 'timeout'], // query_canceled: statement_timeout
  ['55P03', 'timeout'], // lock_not_available: lock_timeout
  ['25P03', 'timeout'], // idle_in_transaction_session_timeout
  ['53100', 'disk_full'],
  ['53', 'busy'], // insufficient resources: out of memory, too many connections
  ['25006', 'read_only'], // read_only_sql_transaction: a hot standby
  ['58030', 'io_error'],
  ['40P01', 'busy'], // deadlock, still there after the driver's retries
  ['40001', 'busy'], // serialization failure, likewise
];

const ERRNO: Readonly<Record<string, StoreFaultCondition>> = Object.freeze({
  ECONNREFUSED: 'unreachable',
  ECONNRESET: 'unreachable',
  ECONNABORTED: 'unreachable',
  EPIPE: 'unreachable',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ETIMEDOUT: 'timeout',
  ENOSPC: 'disk_full',
  EDQUOT: 'disk_full',
  EROFS: 'read_only',
  EIO: 'io_error',
});

// node-postgres reports a dead or stalled connection with these messages and no code.
const PG_MESSAGES: ReadonlyArray<readonly [pattern: RegExp, condition: StoreFaultCondition]> = [
  [/timeout exceeded when trying to connect/i, 'timeout'],
  [/Connection terminated due to connection timeout/i, 'timeout'],
  [/Query read timeout/i, 'timeout'],
  [/Connection terminated/i, 'unreachable'],
  [/connection error and is not queryable/i, 'unreachable'],
  [/Client was closed and is not queryable/i, 'unreachable'],
];

function codeOf(error: object): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
}

/** The condition an error of a database driver means, or undefined when it is not a store fault. */
export function storeFaultCondition(error: unknown): StoreFaultCondition | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if (error instanceof StoreFaultError) return error.condition;
  const code = codeOf(error);
  if (code.startsWith('SQLITE_')) return SQLITE.find(([prefix]) => code.startsWith(prefix))?.[1];
  if (/^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E')) {
    return SQLSTATE.find(([prefix]) => code.startsWith(prefix))?.[1];
  }
  const errno = ERRNO[code];
  if (errno) return errno;
  const message = error instanceof Error ? error.message : '';
  const matched = PG_MESSAGES.find(([pattern]) => pattern.test(message))?.[1];
  if (matched) return matched;
  // pg wraps a socket error in an AggregateError when every address of a host refused.
  if (error instanceof AggregateError) return error.errors.map(storeFaultCondition).find(Boolean);
  return undefined;
}

/**
 * The error a driver should throw for `error`: a {@link StoreFaultError} (with `error` as its
 * cause) when it means the database or its disk is unavailable, else `error` itself.
 */
export function asStoreFault(error: unknown): unknown {
  if (error instanceof StoreFaultError) return error;
  const condition = storeFaultCondition(error);
  if (!condition) return error;
  const code = typeof error === 'object' && error !== null ? codeOf(error) : '';
  const detail = code || (error instanceof Error ? error.message : String(error));
  return new StoreFaultError(condition, detail, { cause: error });
}

/**
 * Log fields of a store that is unavailable for a while (`condition` and the driver's message,
 * never a stack), or undefined for any other error: a background loop logs an outage as one
 * `warn` line per try instead of an `error` with a stack trace.
 */
export function storeFaultFields(
  error: unknown,
):
  | { readonly condition: StoreFaultCondition | 'unavailable'; readonly cause: string | undefined }
  | undefined {
  if (!(error instanceof StoreUnavailableError)) return undefined;
  return {
    condition: error instanceof StoreFaultError ? error.condition : 'unavailable',
    cause: error.cause instanceof Error ? error.cause.message : undefined,
  };
}
