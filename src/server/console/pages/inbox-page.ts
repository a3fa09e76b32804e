import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Proposal } from '../../../engine/proposal.js';
import { formatMoney } from '../../../operation/money.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatAge, formatInstant, formatSpan } from '../format-time.js';
import { INBOX_SCRIPT } from '../inbox-script.js';
import { INBOX_SORTS, type InboxQuery, type InboxTab, inboxHref } from '../inbox-query.js';
import { layout } from '../layout.js';
import { liveInbox } from '../live-inbox.js';
import type { ListedFields } from '../list-preview.js';
import { findTextHazards } from '../../../operation/text-hazards.js';
import { userText } from '../render-text.js';
import { previewTitle } from '../render-value.js';
import { statusBadge } from './status-badge.js';

type Html = HtmlEscapedString;

/** The totals behind the tabs: every matching proposal, not a page of them. */
export type InboxCounts = Readonly<Record<InboxTab, number>>;

const TABS: readonly (readonly [InboxTab, string])[] = [
  ['pending', 'Pending'],
  ['needs_reconciliation', 'Needs reconciliation'],
  ['recent', 'Recently decided'],
];

function timeLeft(proposal: Proposal, now: number): Html {
  const left = proposal.expiresAt.getTime() - now;
  const when = formatInstant(proposal.expiresAt);
  if (left <= 0)
    return html`<time class="gone" datetime="${proposal.expiresAt.toISOString()}" title="${when}">expired</time>` as Html;
  return html`<time class="${left < 5 * 60_000 ? 'soon' : ''}" datetime="${proposal.expiresAt.toISOString()}" title="${when}">${formatSpan(left)} left</time>` as Html;
}

function amountCell(fields: ListedFields): Html {
  const { amount } = fields;
  return amount
    ? (html`<data value="${amount.minor}">${formatMoney(amount.minor, amount.currency)}</data>` as Html)
    : (html`<span class="none" aria-label="no amount">—</span>` as Html);
}

function destinationCell(fields: ListedFields): Html {
  const { destination } = fields;
  if (destination === undefined) return html`<span class="none" aria-label="no destination">—</span>` as Html;
  if (typeof destination === 'string') return userText(destination);
  const shown = destination.slice(0, 3);
  return html`${shown.map((d, i) => html`${i > 0 ? ', ' : ''}${userText(d)}`)}${
    destination.length > shown.length ? ` +${destination.length - shown.length} more` : ''
  }` as Html;
}

function summary(query: InboxQuery, total: number, filtered: boolean): string {
  const noun = `${total} ${total === 1 ? 'proposal' : 'proposals'}${filtered ? ' matching the filters' : ''}`;
  const is = total === 1 ? 'is' : 'are';
  switch (query.status) {
    case 'pending':
      return total === 0 && !filtered
        ? 'Nothing is waiting for a decision.'
        : `${noun} ${is} waiting for a decision.`;
    case 'needs_reconciliation':
      return `${noun} ${total === 1 ? 'needs' : 'need'} reconciling with the provider.`;
    case 'recent':
      return `${noun} ${total === 1 ? 'was' : 'were'} decided in the last 24 hours.`;
    default:
      return `${noun} ${is} ${query.status.replace(/_/g, ' ')}.`;
  }
}

/**
 * The tenant's triage inbox: tabs with their totals, filters by operation and requester, search,
 * sort, and one row per proposal with amount and destination from the redacted preview. Every
 * choice lives in the URL; the keyboard script only moves between links.
 */
export function inboxPage(input: {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly query: InboxQuery;
  readonly items: readonly { readonly proposal: Proposal; readonly fields: ListedFields }[];
  readonly counts: InboxCounts;
  /** How many proposals the current tab and filters match, across every page. */
  readonly total: number;
  readonly operations: readonly string[];
  readonly now: number;
  readonly nextCursor?: string | undefined;
}): Html {
  const { items, now, query } = input;
  const filtered = query.operation !== undefined || query.requester !== undefined || query.q !== undefined;
  const waiting = query.status === 'pending';
  const rows = items.map(
    ({ proposal: p, fields }) => html`<tr data-inbox-row>
      <td class="summary"><a data-open href="/proposals/${p.id}">${userText(previewTitle(p.preview, p.operation))}</a><div class="sub"><span class="hash small">${p.short}</span>${
        p.approvals.required > 1
          ? html` <span class="quorum" data-testid="approvals">${p.approvals.given.length} of ${p.approvals.required} approvals</span>`
          : ''
      }${
        findTextHazards(p.preview, '$', 1).length > 0
          ? html` <span class="ctl script" data-testid="text-flag" title="The preview holds invisible characters or look-alike words: open it to see them">⚠ check the text</span>`
          : ''
      }</div></td>
      <td class="nowrap num-col" data-testid="amount">${amountCell(fields)}</td>
      <td data-testid="destination">${destinationCell(fields)}</td>
      <td><span class="op">${p.operation}</span></td>
      <td>${userText(p.requestedBy)}</td>
      <td class="nowrap"><time datetime="${p.createdAt.toISOString()}" title="${formatInstant(p.createdAt)}">${formatAge(p.createdAt, now)}</time></td>
      <td class="nowrap">${waiting ? timeLeft(p, now) : statusBadge(p.status)}</td>
    </tr>`,
  );
  const tabs = html`<nav class="tabs" aria-label="Proposals by status">${TABS.map(
    ([tab, label]) =>
      html`<a href="${inboxHref(query, { status: tab, cursor: undefined })}" data-testid="tab-${tab}"${
        query.status === tab ? html` aria-current="page"` : ''
      }>${label} <span class="count">${input.counts[tab]}</span></a>`,
  )}</nav>` as Html;
  const filters =
    html`<form class="filters" method="get" action="/" role="search" aria-label="Filter proposals">
    ${query.status !== 'pending' ? html`<input type="hidden" name="status" value="${query.status}">` : ''}
    <div><label for="inbox-q">Search</label><input type="search" id="inbox-q" name="q" value="${query.q ?? ''}" maxlength="200" placeholder="Proposal id, short hash or title"></div>
    <div><label for="inbox-operation">Operation</label><select id="inbox-operation" name="operation"><option value="">Any operation</option>${input.operations.map(
      (op) => html`<option value="${op}"${query.operation === op ? html` selected` : ''}>${op}</option>`,
    )}</select></div>
    <div><label for="inbox-requester">Requested by</label><input type="text" id="inbox-requester" name="requester" value="${query.requester ?? ''}" maxlength="200" placeholder="agent:…"></div>
    <div><label for="inbox-sort">Sort</label><select id="inbox-sort" name="sort">${INBOX_SORTS.map(
      ([sort, label]) =>
        html`<option value="${sort}"${query.sort === sort ? html` selected` : ''}>${label}</option>`,
    )}</select></div>
    <div class="filter-actions"><button type="submit" class="secondary">Apply</button>${
      filtered || query.sort !== 'created'
        ? html` <a href="${inboxHref({ status: query.status, sort: 'created' })}">Clear</a>`
        : ''
    }</div>
  </form>` as Html;
  const body = html`<main id="main" class="inbox">
  <div class="page-head">
    <div>
      <h1>Inbox</h1>
      <p data-testid="inbox-summary">${summary(query, input.total, filtered)}</p>
    </div>
  </div>
  ${liveInbox(input.nonce)}
  ${tabs}
  ${filters}
  ${
    items.length === 0
      ? html`<div class="empty">${
          filtered
            ? html`<strong>No match</strong>No proposal here matches the filters.`
            : waiting
              ? html`<strong>All clear</strong>New proposals from your agents appear here.`
              : html`<strong>None</strong>No proposal is in this list.`
        }</div>`
      : html`<table class="list">
    <caption class="sr-only">${TABS.find(([t]) => t === query.status)?.[1] ?? query.status} proposals</caption>
    <thead><tr><th scope="col">Proposal</th><th scope="col" class="num-col">Amount</th><th scope="col">Destination</th><th scope="col">Operation</th><th scope="col">Requested by</th><th scope="col">Age</th><th scope="col">${waiting ? 'Time left' : 'Status'}</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`
  }
  <p class="pager">${
    query.cursor ? html`<a href="${inboxHref(query, { cursor: undefined })}">← First page</a> ` : ''
  }${input.nextCursor ? html`<a rel="next" href="${inboxHref(query, { cursor: input.nextCursor })}">Next page →</a>` : ''}</p>
  <p class="keys-hint muted" id="inbox-keys-hint" hidden>Press <kbd>?</kbd> for keyboard shortcuts.</p>
  <div class="card keys" id="inbox-keys" role="region" aria-label="Keyboard shortcuts" hidden>
    <h2>Keyboard shortcuts</h2>
    <dl class="value"><dt><kbd>j</kbd> / <kbd>k</kbd></dt><dd>Next / previous proposal</dd><dt><kbd>o</kbd> or <kbd>Enter</kbd></dt><dd>Open the selected proposal</dd><dt><kbd>/</kbd></dt><dd>Search</dd><dt><kbd>?</kbd></dt><dd>Show or hide this help</dd></dl>
    <p class="muted">No key approves: approving always takes the proposal page and its button.</p>
  </div>
</main>` as Html;
  return layout({
    title: 'Inbox',
    nonce: input.nonce,
    session: input.session,
    current: 'inbox',
    body,
    scripts: [INBOX_SCRIPT.path],
  });
}

/** The inbox's answer to a query parameter it cannot honour: the parameter named, and a way back. */
export function inboxQueryErrorPage(input: {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly parameter: string;
  readonly message: string;
}): Html {
  const body = html`<main id="main">
  <div class="page-head"><div><h1>Inbox</h1></div></div>
  <div class="banner bad" role="alert" data-testid="query-error"><strong>The inbox cannot show this list: the <code>${input.parameter}</code> parameter is not valid.</strong> ${userText(input.message)}.</div>
  <p><a href="/">Back to the inbox</a></p>
</main>` as Html;
  return layout({ title: 'Inbox', nonce: input.nonce, session: input.session, current: 'inbox', body });
}
