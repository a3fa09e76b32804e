import type { PendingAuditEvent } from '../audit/event.js';

/**
 * The lifecycle events notifications carry. `proposal.approval_given`: an approval toward a quorum
 * that is not complete yet (1 of 2); the proposal stays pending for the other approvers.
 * `proposal.escalated`: nobody decided a routed proposal within its route's escalation time; its
 * escalation group may decide it now. `proposal.reminded`: a pending proposal expires soon (once).
 */
export type LifecycleEventType =
  | 'proposal.created'
  | 'proposal.approval_given'
  | 'proposal.escalated'
  | 'proposal.reminded'
  | 'proposal.decided'
  | 'proposal.outcome';

/** The events that ask the approvers who may still decide a pending proposal to decide it. */
export function asksForDecision(type: string): boolean {
  return (
    type === 'proposal.created' ||
    type === 'proposal.approval_given' ||
    type === 'proposal.escalated' ||
    type === 'proposal.reminded'
  );
}

/** What a decision made of a pending proposal. */
export type DecisionStatus = 'approved' | 'declined' | 'expired' | 'superseded';

/** Where an approved proposal ended up (`reconciled`: a person settled a needs_reconciliation). */
export type OutcomeStatus =
  | 'succeeded'
  | 'revision_required'
  | 'needs_reconciliation'
  | 'terminal_failure'
  | 'reconciled';

/** One lifecycle event: its type and the status it announces. */
export type LifecycleEvent =
  | { readonly type: 'proposal.created'; readonly status: 'pending' }
  | { readonly type: 'proposal.approval_given'; readonly status: 'pending' }
  | { readonly type: 'proposal.escalated'; readonly status: 'pending' }
  | { readonly type: 'proposal.reminded'; readonly status: 'pending' }
  | { readonly type: 'proposal.decided'; readonly status: DecisionStatus }
  | { readonly type: 'proposal.outcome'; readonly status: OutcomeStatus; readonly resolution?: string };

const OUTCOMES: readonly string[] = [
  'succeeded',
  'revision_required',
  'needs_reconciliation',
  'terminal_failure',
];

/**
 * The lifecycle event an audit step announces, if any. `earlier` are the events recorded before it
 * in the same transaction: the outcome a reconciliation records after its `reconciled` step is
 * announced once, as `reconciled`, with the provider's answer as its `resolution`.
 */
export function lifecycleEventOf(
  event: PendingAuditEvent,
  earlier: readonly PendingAuditEvent[],
): LifecycleEvent | undefined {
  switch (event.step) {
    case 'proposed':
      return { type: 'proposal.created', status: 'pending' };
    case 'partially_approved':
      return { type: 'proposal.approval_given', status: 'pending' };
    case 'escalated':
      return { type: 'proposal.escalated', status: 'pending' };
    case 'reminded':
      return { type: 'proposal.reminded', status: 'pending' };
    case 'approved':
      return { type: 'proposal.decided', status: 'approved' };
    case 'declined':
      return { type: 'proposal.decided', status: 'declined' };
    case 'expired':
      return { type: 'proposal.decided', status: 'expired' };
    case 'edited':
      return { type: 'proposal.decided', status: 'superseded' };
    case 'outcome': {
      const kind = event.detail['outcome'];
      if (typeof kind !== 'string' || !OUTCOMES.includes(kind)) return undefined;
      const reconciled = earlier.some((e) => e.step === 'reconciled' && e.proposalId === event.proposalId);
      return reconciled
        ? { type: 'proposal.outcome', status: 'reconciled', resolution: kind }
        : { type: 'proposal.outcome', status: kind as OutcomeStatus };
    }
    default:
      return undefined;
  }
}
