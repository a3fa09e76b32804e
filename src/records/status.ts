// The bottom layer: the status types every layer speaks of (stored by the store, shown by i18n,
// decided by the engine). Types only, importing nothing, so any layer may use them.

/** Where a proposal is in its lifecycle. */
export type ProposalStatus =
  | 'pending'
  | 'executing'
  | 'succeeded'
  | 'needs_reconciliation'
  | 'revision_required'
  | 'terminal_failure'
  | 'declined'
  | 'superseded'
  | 'expired';

/**
 * Where an attempt is. `executing` attempts hold a lease; `abandoned` ones were taken over by a
 * recovery sweep after their lease ended (their worker can no longer commit).
 */
export type AttemptStatus = 'executing' | 'completed' | 'needs_reconciliation' | 'abandoned';
