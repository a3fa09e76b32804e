import { CountersignError } from '../canonical/errors.js';
import { isWellFormedText } from '../canonical/canonicalize.js';

/**
 * Whether every backend stores `text` exactly. PostgreSQL TEXT cannot hold U+0000, and a lone
 * UTF-16 surrogate is replaced by U+FFFD on the way to UTF-8 (better-sqlite3 does so silently,
 * PostgreSQL refuses it): either way the row would not read back as written.
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && isWellFormedText(text);
}

/**
 * A record field holds text a store cannot keep exactly: a NUL character or a lone UTF-16
 * surrogate. Every store refuses the write (nothing is stored) rather than store something else,
 * on SQLite as on PostgreSQL, so a value is refused or kept the same way whichever backend runs.
 *
 * @example
 * try {
 *   await engine.proposals.decline({ tenant, proposalId, actor, reason: 'bad\u0000note' });
 * } catch (error) {
 *   if (error instanceof UnstorableValueError) console.error(error.column); // 'decision_note'
 * }
 */
export class UnstorableValueError extends CountersignError {
  /** The column whose value was refused. */
  readonly column: string;

  constructor(table: string, column: string) {
    super(`${table}.${column}: text with a NUL character or a lone surrogate cannot be stored exactly`);
    this.column = column;
  }
}

/** Throws {@link UnstorableValueError} for the first value that would not round-trip. */
export function assertStorable(table: string, columns: readonly string[], values: readonly unknown[]): void {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value === 'string' && !isStorableText(value))
      throw new UnstorableValueError(table, columns[i] ?? '?');
  }
}
