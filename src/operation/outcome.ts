import type { DenialReason } from './reasons.js';

/**
 * What happened when an approved proposal executed. Stored once; a replayed approval returns the
 * stored outcome, never a fresh one.
 */
export type Outcome<Result = unknown> =
  | { readonly kind: 'succeeded'; readonly result: Result }
  | { readonly kind: 'needs_reconciliation'; readonly statusPath: string }
  | { readonly kind: 'revision_required'; readonly reason: string }
  | {
      readonly kind: 'terminal_failure';
      readonly correlationId: string;
      /** Set when the engine itself refused (e.g. `scope_mismatch` at the command guard). */
      readonly reason?: DenialReason;
      /** Safe text for operators and the next model turn; never a stack trace. */
      readonly message: string;
    };

/** The kinds of {@link Outcome}. */
export type OutcomeKind = Outcome['kind'];
