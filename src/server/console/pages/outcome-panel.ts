import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Proposal } from '../../../engine/proposal.js';
import { statusPath } from '../../api/proposal-json.js';
import { userText } from '../render-text.js';
import { renderValue } from '../render-value.js';

/**
 * What happened when the proposal executed: succeeded (with its result), revision required
 * (with the safe reason), needs reconciliation (with a reconcile button), or a terminal failure
 * (with its correlation id). Empty while nothing has executed.
 */
export function outcomePanel(input: {
  readonly proposal: Proposal;
  readonly handback: string;
  readonly csrf: string;
  readonly mayReconcile: boolean;
}): HtmlEscapedString | '' {
  const { proposal } = input;
  const outcome = proposal.outcome;
  if (proposal.status === 'executing' && !outcome) {
    return html`<section class="card outcome" aria-labelledby="outcome-h"><h2 id="outcome-h">Outcome</h2><p class="headline">Executing…</p><p>Attempt ${proposal.attempts} is running. Reload for its outcome.</p></section>` as HtmlEscapedString;
  }
  if (!outcome) return '';
  const told = html`<p class="hint">Handed back to the agent: ${userText(input.handback)}</p>`;
  let content: HtmlEscapedString;
  switch (outcome.kind) {
    case 'succeeded':
      content =
        html`<p class="headline">Succeeded</p><p>The approved contract <span class="hash">${proposal.short}</span> was executed once.</p>${
          outcome.result !== null && outcome.result !== undefined
            ? html`<div class="event-detail">${renderValue(outcome.result)}</div>`
            : ''
        }${told}` as HtmlEscapedString;
      break;
    case 'revision_required':
      content =
        html`<p class="headline">Revision required: nothing was executed</p><p>${userText(outcome.reason)}</p><p class="muted">A fact changed after the review. The agent must propose again; the old approval is not reused.</p>${told}` as HtmlEscapedString;
      break;
    case 'needs_reconciliation':
      content =
        html`<p class="headline">Needs reconciliation</p><p>The provider did not confirm the call, so it may or may not have happened. It is never retried blindly: reconciling looks the attempt up at the provider by its idempotency key.</p><p class="muted">Status path <code>${statusPath(proposal.id)}</code></p>${
          input.mayReconcile && proposal.status === 'needs_reconciliation'
            ? html`<form method="post" action="/proposals/${proposal.id}/reconcile"><input type="hidden" name="csrf" value="${input.csrf}"><button class="secondary" type="submit">Reconcile with the provider</button></form>`
            : ''
        }${told}` as HtmlEscapedString;
      break;
    case 'terminal_failure':
      content =
        html`<p class="headline">Failed: will not be retried</p><p>${userText(outcome.message)}</p><p>Correlation id <code>${outcome.correlationId}</code>${
          outcome.reason ? html` · reason <code>${outcome.reason}</code>` : ''
        }</p>${told}` as HtmlEscapedString;
      break;
  }
  return html`<section class="card outcome ${outcome.kind}" aria-labelledby="outcome-h"><h2 id="outcome-h">Outcome</h2>${content}</section>` as HtmlEscapedString;
}
