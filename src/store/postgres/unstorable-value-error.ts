import { CountersignError } from '../../canonical/errors.js';

// PostgreSQL TEXT cannot hold U+0000, and a lone UTF-16 surrogate would be silently replaced by
// U+FFFD on the way to UTF-8: either way the row would not read back as written.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A record field holds text PostgreSQL cannot store exactly: a NUL character or a lone UTF-16
 * surrogate. The store refuses the write (nothing is stored) rather than store something else.
 *
 * @example
 * try {
 *   await engine.decline({ tenant, proposalId, actor, reason: 'bad\u0000note' });
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
    if (typeof value === 'string' && (value.includes('\u0000') || LONE_SURROGATE.test(value)))
      throw new UnstorableValueError(table, columns[i] ?? '?');
  }
}
