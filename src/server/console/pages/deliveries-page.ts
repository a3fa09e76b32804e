import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { DeliveryView } from '../../../notify/deliveries.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatInstant } from '../format-time.js';
import { layout } from '../layout.js';
import { userText } from '../render-text.js';

// The proposal badges' colours: delivered reads like succeeded, dead like a terminal failure.
const BADGE: Readonly<Record<DeliveryView['status'], string>> = {
  pending: 'pending',
  delivered: 'succeeded',
  skipped: 'expired',
  dead: 'terminal_failure',
};

function when(iso: string | null): HtmlEscapedString | string {
  return iso
    ? (html`<time datetime="${iso}">${formatInstant(Date.parse(iso))}</time>` as HtmlEscapedString)
    : '—';
}

/**
 * The tenant's notification deliveries for admins: channel, event, status, attempts, the last
 * error and when it is tried next, with Redeliver on every finished one. Every value is escaped.
 */
export function deliveriesPage(input: {
  readonly nonce: string;
  readonly session: ConsoleSession;
  /** Undefined when this server sends no notifications. */
  readonly deliveries: readonly DeliveryView[] | undefined;
}): HtmlEscapedString {
  const rows = (input.deliveries ?? []).map(
    (d) => html`<tr>
      <td><span class="op">${d.channel}</span><div class="sub">${d.type}</div></td>
      <td><a href="/proposals/${encodeURIComponent(d.proposalId)}">${d.proposalId}</a><div class="sub"><span class="hash small">${d.eventId}</span></div></td>
      <td><span class="badge ${BADGE[d.status]}">${d.status}</span></td>
      <td>${d.attempts}</td>
      <td>${d.lastError ? userText(d.lastError) : '—'}</td>
      <td class="nowrap">${when(d.lastAttemptAt)}</td>
      <td class="nowrap">${when(d.nextAttemptAt)}</td>
      <td>${
        d.status === 'pending'
          ? ''
          : html`<form method="post" action="/deliveries/${d.id}/redeliver"><input type="hidden" name="csrf" value="${input.session.csrfToken}"><button type="submit" aria-label="Redeliver ${d.type} of ${d.proposalId} by ${d.channel}">Redeliver</button></form>`
      }</td>
    </tr>`,
  );
  const body = html`<main id="main">
  <div class="page-head"><div><h1>Deliveries</h1><p>Webhooks and approval emails of this tenant, newest first.</p></div></div>
  ${
    input.deliveries === undefined
      ? html`<div class="empty"><strong>Notifications are off</strong>This server sends no webhooks or emails: see <code>--webhook</code> and <code>--smtp</code>.</div>`
      : input.deliveries.length === 0
        ? html`<div class="empty"><strong>No deliveries yet</strong>Each proposal's events appear here.</div>`
        : html`<section class="table-scroll" aria-labelledby="deliveries-caption" tabindex="0"><table class="list">
    <caption id="deliveries-caption" class="sr-only">Deliveries</caption>
    <thead><tr><th scope="col">Channel · event</th><th scope="col">Proposal · event id</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Last attempt</th><th scope="col">Next attempt</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table></section>`
  }
</main>` as HtmlEscapedString;
  return layout({
    title: 'Deliveries',
    nonce: input.nonce,
    session: input.session,
    current: 'deliveries',
    body,
  });
}
