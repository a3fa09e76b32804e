import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
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
export function statusBadge(status: ProposalStatus): HtmlEscapedString {
  return html`<span class="badge ${status}">${LABELS[status]}</span>` as HtmlEscapedString;
}
