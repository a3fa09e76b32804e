/**
 * The English messages: the reference catalog. Its keys are every message countersign writes for
 * people; its `{placeholders}` are what each translation must use, no more, no fewer.
 */
export const en = {
  'handback.pending': 'Waiting for a human decision.',
  'handback.declined': 'A human declined it.',
  'handback.declined_note': 'A human declined it: {note}',
  'handback.superseded': 'An operator edited it; the new proposal is {next}.',
  'handback.expired': 'It expired before anyone approved it.',
  'handback.executing': 'It is executing.',
  // The opening of a decided proposal's text: who approved it, and whether the application executed it.
  'handback.approved_executing': 'Approved by a human; the application is executing it.',
  'handback.granted_executing': 'Approved by a standing grant; the application is executing it.',
  'handback.approved_executed': 'Approved by a human; the application executed it.',
  'handback.granted_executed': 'Approved by a standing grant; the application executed it.',
  'handback.approved_not_executed': 'Approved by a human; the application did not execute it.',
  'handback.granted_not_executed': 'Approved by a standing grant; the application did not execute it.',
  'handback.none': 'No proposals in this run yet.',
  'handback.line': '- {operation} {proposalId} ({short}): {status}. {text}',
  'handback.intro':
    'What happened to the proposals you made earlier (reported by the application, never by a model):',
  'outcome.succeeded': 'The approved operation succeeded.',
  'outcome.succeeded_ids': 'The approved operation succeeded ({identifiers}).',
  'outcome.needs_reconciliation':
    'The provider did not confirm the operation; it is being reconciled. Do not retry it.',
  'outcome.revision_required': 'The operation was not executed: {reason} A new proposal is needed.',
  'outcome.terminal_failure':
    'The operation failed and will not be retried (correlation id {correlationId}).',
  // English keeps the status codes themselves: that is what the handback has always shown.
  'status.pending': 'pending',
  'status.executing': 'executing',
  'status.succeeded': 'succeeded',
  'status.needs_reconciliation': 'needs_reconciliation',
  'status.revision_required': 'revision_required',
  'status.terminal_failure': 'terminal_failure',
  'status.declined': 'declined',
  'status.superseded': 'superseded',
  'status.expired': 'expired',
} as const;
