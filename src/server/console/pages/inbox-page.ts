import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Proposal } from '../../../engine/proposal.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatAge, formatInstant, formatSpan } from '../format-time.js';
import { layout } from '../layout.js';
import { liveInbox } from '../live-inbox.js';
import { findTextHazards } from '../../../operation/text-hazards.js';
import { userText } from '../render-text.js';
import { previewTitle } from '../render-value.js';

function timeLeft(proposal: Proposal, now: number): HtmlEscapedString {
  const left = proposal.expiresAt.getTime() - now;
  const when = formatInstant(proposal.expiresAt);
  if (left <= 0)
    return html`<time class="gone" datetime="${proposal.expiresAt.toISOString()}" title="${when}">expired</time>` as HtmlEscapedString;
  return html`<time class="${left < 5 * 60_000 ? 'soon' : ''}" datetime="${proposal.expiresAt.toISOString()}" title="${when}">${formatSpan(left)} left</time>` as HtmlEscapedString;
}

/** The tenant's pending proposals: operation, one-line summary, requester, age and time left. */
export function inboxPage(input: {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly items: readonly Proposal[];
  readonly now: number;
  readonly nextCursor?: string | undefined;
}): HtmlEscapedString {
  const { items, now } = input;
  const rows = items.map(
    (p) => html`<tr>
      <td class="summary"><a href="/proposals/${p.id}">${userText(previewTitle(p.preview, p.operation))}</a><div class="sub"><span class="hash small">${p.short}</span>${
        p.approvals.required > 1
          ? html` <span class="quorum" data-testid="approvals">${p.approvals.given.length} of ${p.approvals.required} approvals</span>`
          : ''
      }${
        findTextHazards(p.preview, '$', 1).length > 0
          ? html` <span class="ctl script" data-testid="text-flag" title="The preview holds invisible characters or look-alike words: open it to see them">⚠ check the text</span>`
          : ''
      }</div></td>
      <td><span class="op">${p.operation}</span></td>
      <td>${userText(p.requestedBy)}</td>
      <td class="nowrap"><time datetime="${p.createdAt.toISOString()}" title="${formatInstant(p.createdAt)}">${formatAge(p.createdAt, now)}</time></td>
      <td class="nowrap">${timeLeft(p, now)}</td>
    </tr>`,
  );
  const body = html`<main id="main">
  ${liveInbox(input.nonce)}
  <div class="page-head">
    <div>
      <h1>Inbox</h1>
      <p>${items.length === 0 ? 'Nothing is waiting for a decision.' : `${items.length}${input.nextCursor ? '+' : ''} ${items.length === 1 ? 'proposal is' : 'proposals are'} waiting for a decision.`}</p>
    </div>
  </div>
  ${
    items.length === 0
      ? html`<div class="empty"><strong>All clear</strong>New proposals from your agents appear here.</div>`
      : html`<table class="list">
    <caption class="sr-only">Pending proposals</caption>
    <thead><tr><th scope="col">Proposal</th><th scope="col">Operation</th><th scope="col">Requested by</th><th scope="col">Age</th><th scope="col">Time left</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`
  }
  ${input.nextCursor ? html`<p class="pager"><a href="/?cursor=${encodeURIComponent(input.nextCursor)}">Older proposals →</a></p>` : ''}
</main>` as HtmlEscapedString;
  return layout({ title: 'Inbox', nonce: input.nonce, session: input.session, current: 'inbox', body });
}
