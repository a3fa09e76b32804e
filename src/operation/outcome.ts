import type { DenialReason } from './reasons.js';

/**
 * What happened when an approved proposal executed. Stored once; a replayed approval returns the
 * stored outcome, never a fresh one.
 */
export type Outcome<Result = unknown> =
  | { readonly kind: 'succeeded'; readonly result: Result }
  /**
   * The provider did not confirm the call. Server-independent, like every stored outcome: where a
   * client checks on it (the API's status path) is added by the projection that shows it.
   */
  | { readonly kind: 'needs_reconciliation' }
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
