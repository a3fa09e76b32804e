import type { LocalTransaction } from '../../operation/define-operation.js';
import { sql } from '../../sql/sql.js';

/** One counter to reserve a sign-in attempt against: its key and how many attempts a window allows. */
export interface LimitKey {
  readonly key: string;
  readonly max: number;
}

/** A reserved attempt: the counters it took a slot of, each with its window, so a success gives them back. */
export interface Reservation {
  readonly slots: readonly { readonly key: string; readonly windowStart: number }[];
}

/** The result of {@link reserveAttempt}: a slot on every counter, or how long until one frees up. */
export type ReserveResult =
  | { readonly kind: 'reserved'; readonly reservation: Reservation }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number };

// One statement takes the slot or leaves the row alone: a fresh row, a window that has passed
// (restart at 1), or a live window below its maximum (one more). PostgreSQL locks the row for the
// conflicting update and re-checks the WHERE against the newest version, and SQLite writes under
// BEGIN IMMEDIATE, so concurrent attempts on several servers never both take the last slot.
const reserve = (key: string, now: number, expired: number, max: number) =>
  sql`INSERT INTO countersign_login_failures (limit_key, window_start, failures) VALUES (${key}, ${now}, 1)
  ON CONFLICT (limit_key) DO UPDATE SET
    window_start = CASE WHEN countersign_login_failures.window_start <= ${expired} THEN excluded.window_start ELSE countersign_login_failures.window_start END,
    failures = CASE WHEN countersign_login_failures.window_start <= ${expired} THEN 1 ELSE countersign_login_failures.failures + 1 END
  WHERE countersign_login_failures.window_start <= ${expired} OR countersign_login_failures.failures < ${max}`;

/**
 * Takes one attempt slot on every counter in `keys`, in one transaction, BEFORE the password is
 * checked (checking first and counting after lets N concurrent guesses all through). A slot is
 * an attempt in flight until the password check: a failure keeps it (it is the failure count),
 * a success gives it back with {@link releaseAttempt}. When any counter is full the slots
 * already taken are given back and nothing is checked. Keys are always taken in the caller's
 * order (account before client), so two transactions never wait on each other in a cycle.
 */
export async function reserveAttempt(
  db: LocalTransaction,
  keys: readonly LimitKey[],
  now: number,
  windowMs: number,
): Promise<ReserveResult> {
  const expired = now - windowMs;
  const taken: { key: string; windowStart: number }[] = [];
  for (const { key, max } of keys) {
    const result = await db.run(reserve(key, now, expired, max));
    const row = (
      await db.all(sql`SELECT window_start FROM countersign_login_failures WHERE limit_key = ${key}`)
    )[0];
    const windowStart = Number(row?.['window_start'] ?? now);
    if (result.changes === 1) {
      taken.push({ key, windowStart });
      continue;
    }
    await releaseAttempt(db, { slots: taken });
    return { kind: 'rate_limited', retryAfterMs: Math.max(1, windowStart + windowMs - now) };
  }
  return { kind: 'reserved', reservation: { slots: taken } };
}

/** Gives back the slots of a reserved attempt (the password was right). A window that has since restarted is left alone. */
export async function releaseAttempt(db: LocalTransaction, reservation: Reservation): Promise<void> {
  for (const slot of reservation.slots)
    await db.run(
      sql`UPDATE countersign_login_failures SET failures = failures - 1 WHERE limit_key = ${slot.key} AND window_start = ${slot.windowStart} AND failures > 0`,
    );
}

/** Forgets counters whose window has passed, so keys an attacker made up do not pile up. */
export async function forgetExpired(db: LocalTransaction, now: number, windowMs: number): Promise<void> {
  await db.run(sql`DELETE FROM countersign_login_failures WHERE window_start <= ${now - windowMs}`);
}
