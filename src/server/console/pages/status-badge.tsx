import type { ProposalStatus } from '../../../store/records.js';

const LABELS: Readonly<Record<ProposalStatus, string>> = {
  pending: 'Pending',
  executing: 'Executing',
  succeeded: 'Succeeded',
  needs_reconciliation: 'Needs reconciliation',
  revision_required: 'Revision required',
  terminal_failure: 'Failed',
  declined: 'Declined',
  superseded: 'Superseded',
  expired: 'Expired',
};

/** A coloured status pill. */
export function StatusBadge({ status }: { readonly status: ProposalStatus }) {
  return <span class={`badge ${status}`}>{LABELS[status]}</span>;
}

/** {@link StatusBadge} as a function, for places that build children in code. */
export function statusBadge(status: ProposalStatus) {
  return <StatusBadge status={status} />;
}
