import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Proposal } from '../../../engine/proposal.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatInstant } from '../format-time.js';
import { layout } from '../layout.js';
import { userText } from '../render-text.js';
import { previewTitle } from '../render-value.js';
import { statusBadge } from './status-badge.js';

/** Decided proposals, newest first: status, who decided, when, and the short hash. */
export function historyPage(input: {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly items: readonly Proposal[];
  readonly nextCursor?: string | undefined;
}): HtmlEscapedString {
  const rows = input.items.map(
    (p) => html`<tr>
      <td class="summary"><a href="/proposals/${p.id}">${userText(previewTitle(p.preview, p.operation))}</a><div class="sub"><span class="hash small">${p.short}</span></div></td>
      <td><span class="op">${p.operation}</span></td>
      <td>${statusBadge(p.status)}</td>
      <td>${p.decidedBy ? userText(p.decidedBy) : html`<span class="none">—</span>`}</td>
      <td class="nowrap">${p.decidedAt ? html`<time datetime="${p.decidedAt.toISOString()}">${formatInstant(p.decidedAt)}</time>` : html`<span class="none">—</span>`}</td>
    </tr>`,
  );
  const body = html`<main id="main">
  <div class="page-head"><div><h1>History</h1><p>Decided proposals, newest first.</p></div></div>
  ${
    input.items.length === 0
      ? html`<div class="empty"><strong>No decisions yet</strong>Approved, declined, edited and expired proposals appear here.</div>`
      : html`<table class="list">
    <caption class="sr-only">Decided proposals</caption>
    <thead><tr><th scope="col">Proposal</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Decided by</th><th scope="col">Decided at</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`
  }
  ${input.nextCursor ? html`<p class="pager"><a href="/history?cursor=${encodeURIComponent(input.nextCursor)}">Older →</a></p>` : ''}
</main>` as HtmlEscapedString;
  return layout({ title: 'History', nonce: input.nonce, session: input.session, current: 'history', body });
}
