import type { Proposal } from '../../../engine/proposal.js';
import { ListTable } from './list-table.js';
import { formatMoney } from '../../../operation/money.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatAge, formatInstant, formatSpan } from '../format-time.js';
import { INBOX_SCRIPT } from '../inbox-script.js';
import { INBOX_SORTS, type InboxQuery, type InboxTab, inboxHref } from '../inbox-query.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { LiveInbox } from '../live-inbox.js';
import type { ListedFields } from '../list-preview.js';
import { previewTitle } from '../model-view.js';
import { findTextHazards } from '../../../operation/text-hazards.js';
import { UserText } from '../render-text.js';
import { StatusBadge } from './status-badge.js';

/** The totals behind the tabs: every matching proposal, not a page of them. */
export type InboxCounts = Readonly<Record<InboxTab, number>>;

const TABS: readonly (readonly [InboxTab, string])[] = [
  ['needs', 'Needs you'],
  ['pending', 'Pending'],
  ['needs_reconciliation', 'Needs reconciliation'],
  ['recent', 'Recently decided'],
];

function TimeLeft({ proposal, now }: { readonly proposal: Proposal; readonly now: number }) {
  const left = proposal.expiresAt.getTime() - now;
  const when = formatInstant(proposal.expiresAt);
  if (left <= 0)
    return (
      <time class="gone" datetime={proposal.expiresAt.toISOString()} title={when}>
        expired
      </time>
    );
  return (
    <time class={left < 5 * 60_000 ? 'soon' : ''} datetime={proposal.expiresAt.toISOString()} title={when}>
      {formatSpan(left)} left
    </time>
  );
}

function AmountCell({ fields }: { readonly fields: ListedFields }) {
  const { amount } = fields;
  return amount ? (
    <data value={String(amount.minor)}>{formatMoney(amount.minor, amount.currency)}</data>
  ) : (
    // biome-ignore lint/a11y/useAriaPropsSupportedByRole: the markup the console had before JSX, unchanged (no redesign in this move)
    <span class="none" aria-label="no amount">
      —
    </span>
  );
}

function DestinationCell({ fields }: { readonly fields: ListedFields }) {
  const { destination } = fields;
  if (destination === undefined)
    return (
      // biome-ignore lint/a11y/useAriaPropsSupportedByRole: the markup the console had before JSX, unchanged (no redesign in this move)
      <span class="none" aria-label="no destination">
        —
      </span>
    );
  if (typeof destination === 'string') return <UserText text={destination} />;
  const shown = destination.slice(0, 3);
  return (
    <>
      {shown.map((d, i) => (
        <>
          {i > 0 ? ', ' : ''}
          <UserText text={d} />
        </>
      ))}
      {destination.length > shown.length ? ` +${destination.length - shown.length} more` : ''}
    </>
  );
}

function summary(query: InboxQuery, total: number, filtered: boolean): string {
  const noun = `${total} ${total === 1 ? 'proposal' : 'proposals'}${filtered ? ' matching the filters' : ''}`;
  const is = total === 1 ? 'is' : 'are';
  switch (query.status) {
    case 'needs':
      return total === 0 && !filtered
        ? 'Nothing needs your decision.'
        : `${noun} ${total === 1 ? 'needs' : 'need'} your decision.`;
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

/** What a row says about the signed-in operator's part in a proposal. */
export interface YourPart {
  /** They approved it toward a quorum that is not complete yet ("You approved (1 of 2)"). */
  readonly approved: boolean;
  /** Their edit produced it. */
  readonly edited: boolean;
  /** Pending, but the engine lets another approver decide it, not them. */
  readonly waiting: boolean;
}

/** One inbox row: the proposal, its listed fields and the operator's part in it. */
export interface InboxItem {
  readonly proposal: Proposal;
  readonly fields: ListedFields;
  readonly you: YourPart;
}

/** Props of {@link InboxPage}. */
export interface InboxPageProps {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly query: InboxQuery;
  readonly items: readonly InboxItem[];
  readonly counts: InboxCounts;
  /** How many proposals the current tab and filters match, across every page. */
  readonly total: number;
  readonly operations: readonly string[];
  readonly now: number;
  readonly nextCursor?: string | undefined;
}

function YourPartNote({ proposal: p, you }: { readonly proposal: Proposal; readonly you: YourPart }) {
  const parts = [
    ...(you.approved ? [`You approved (${p.approvals.given.length} of ${p.approvals.required})`] : []),
    ...(you.edited ? ['Edited by you'] : []),
    ...(you.waiting ? ['waiting for another approver'] : []),
  ];
  if (parts.length === 0) return '';
  return (
    <>
      {' '}
      <span class="yours" data-testid="your-part">
        {parts.join(' · ')}
      </span>
    </>
  );
}

function InboxRow(props: {
  readonly proposal: Proposal;
  readonly fields: ListedFields;
  readonly you: YourPart;
  readonly now: number;
  readonly waiting: boolean;
}) {
  const { proposal: p, fields, now } = props;
  return (
    <tr data-inbox-row="" data-proposal-id={p.id} data-status={p.status}>
      <td class="summary">
        <a data-open="" href={`/proposals/${p.id}`}>
          <UserText text={previewTitle(p.preview, p.operation)} />
        </a>
        <div class="sub">
          <span class="hash small">{p.short}</span>
          {p.approvals.required > 1 ? (
            <>
              {' '}
              <span class="quorum" data-testid="approvals">
                {p.approvals.given.length} of {p.approvals.required} approvals
              </span>
            </>
          ) : (
            ''
          )}
          <YourPartNote proposal={p} you={props.you} />
          {findTextHazards(p.preview, '$', 1).length > 0 ? (
            <>
              {' '}
              <span
                class="ctl script"
                data-testid="text-flag"
                title="The preview holds invisible characters or look-alike words: open it to see them"
              >
                ⚠ check the text
              </span>
            </>
          ) : (
            ''
          )}
        </div>
      </td>
      <td class="nowrap num-col" data-testid="amount">
        <AmountCell fields={fields} />
      </td>
      <td data-testid="destination">
        <DestinationCell fields={fields} />
      </td>
      <td>
        <span class="op">{p.operation}</span>
      </td>
      <td>
        <UserText text={p.requestedBy} />
      </td>
      <td class="nowrap">
        <time datetime={p.createdAt.toISOString()} title={formatInstant(p.createdAt)}>
          {formatAge(p.createdAt, now)}
        </time>
      </td>
      <td class="nowrap" data-cell="state">
        {props.waiting ? <TimeLeft proposal={p} now={now} /> : <StatusBadge status={p.status} />}
      </td>
    </tr>
  );
}

function Tabs({ query, counts }: { readonly query: InboxQuery; readonly counts: InboxCounts }) {
  // "Needs you" is an approver's tab (their home view); others see it only when they ask for it.
  const tabs = TABS.filter(([tab]) => tab !== 'needs' || query.home === 'needs' || query.status === 'needs');
  return (
    <nav class="tabs" aria-label="Proposals by status">
      {tabs.map(([tab, label]) => (
        <a
          href={inboxHref(query, { status: tab, cursor: undefined })}
          data-testid={`tab-${tab}`}
          aria-current={query.status === tab ? 'page' : undefined}
        >
          {label} <span class="count">{counts[tab]}</span>
        </a>
      ))}
    </nav>
  );
}

function Filters(props: {
  readonly query: InboxQuery;
  readonly operations: readonly string[];
  readonly filtered: boolean;
}) {
  const { query } = props;
  return (
    // biome-ignore lint/a11y/useSemanticElements: the markup the console had before JSX, unchanged (no redesign in this move)
    <form class="filters" method="get" action="/" role="search" aria-label="Filter proposals">
      {query.status !== query.home ? <input type="hidden" name="status" value={query.status} /> : ''}
      <div>
        <label for="inbox-q">Search</label>
        <input
          type="search"
          id="inbox-q"
          name="q"
          value={query.q ?? ''}
          maxlength={200}
          placeholder="Proposal id, short hash or title"
        />
      </div>
      <div>
        <label for="inbox-operation">Operation</label>
        <select id="inbox-operation" name="operation">
          <option value="">Any operation</option>
          {props.operations.map((op) => (
            <option value={op} selected={query.operation === op}>
              {op}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="inbox-requester">Requested by</label>
        <input
          type="text"
          id="inbox-requester"
          name="requester"
          value={query.requester ?? ''}
          maxlength={200}
          placeholder="agent:…"
        />
      </div>
      <div>
        <label for="inbox-sort">Sort</label>
        <select id="inbox-sort" name="sort">
          {INBOX_SORTS.map(([sort, label]) => (
            <option value={sort} selected={query.sort === sort}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div class="filter-actions">
        <button type="submit" class="secondary">
          Apply
        </button>
        {props.filtered || query.sort !== 'created' ? (
          <>
            {' '}
            <a href={inboxHref({ status: query.status, home: query.home, sort: 'created' })}>Clear</a>
          </>
        ) : (
          ''
        )}
      </div>
    </form>
  );
}

function KeyboardHelp() {
  return (
    <>
      <p class="keys-hint muted" id="inbox-keys-hint" hidden>
        Press <kbd>?</kbd> for keyboard shortcuts.
      </p>
      {/* biome-ignore lint/a11y/useSemanticElements: the markup the console had before JSX, unchanged (no redesign in this move) */}
      <div class="card keys" id="inbox-keys" role="region" aria-label="Keyboard shortcuts" hidden>
        <h2>Keyboard shortcuts</h2>
        <dl class="value">
          <dt>
            <kbd>j</kbd> / <kbd>k</kbd>
          </dt>
          <dd>Next / previous proposal</dd>
          <dt>
            <kbd>o</kbd> or <kbd>Enter</kbd>
          </dt>
          <dd>Open the selected proposal</dd>
          <dt>
            <kbd>/</kbd>
          </dt>
          <dd>Search</dd>
          <dt>
            <kbd>?</kbd>
          </dt>
          <dd>Show or hide this help</dd>
        </dl>
        <p class="muted">No key approves: approving always takes the proposal page and its button.</p>
      </div>
    </>
  );
}

/**
 * The tenant's triage inbox: tabs with their totals, filters by operation and requester, search,
 * sort, and one row per proposal with amount and destination from the redacted preview. Every
 * choice lives in the URL; the keyboard script only moves between links.
 */
export function InboxPage(input: InboxPageProps) {
  const { items, now, query } = input;
  const filtered = query.operation !== undefined || query.requester !== undefined || query.q !== undefined;
  const waiting = query.status === 'pending' || query.status === 'needs';
  return (
    <Layout
      title="Inbox"
      nonce={input.nonce}
      session={input.session}
      current="inbox"
      scripts={[INBOX_SCRIPT.path]}
    >
      <main id="main" class="inbox">
        <div class="page-head">
          <div>
            <h1>Inbox</h1>
            <p data-testid="inbox-summary">{summary(query, input.total, filtered)}</p>
          </div>
        </div>
        <LiveInbox nonce={input.nonce} view={query.status} you={input.session.actor.id} />
        <Tabs query={query} counts={input.counts} />
        <Filters query={query} operations={input.operations} filtered={filtered} />
        {items.length === 0 ? (
          <div class="empty">
            {filtered ? (
              <>
                <strong>No match</strong>No proposal here matches the filters.
              </>
            ) : query.status === 'needs' ? (
              <>
                <strong>All clear</strong>Proposals you may still decide appear here.
              </>
            ) : waiting ? (
              <>
                <strong>All clear</strong>New proposals from your agents appear here.
              </>
            ) : (
              <>
                <strong>None</strong>No proposal is in this list.
              </>
            )}
          </div>
        ) : (
          <ListTable
            id="inbox"
            caption={<>{TABS.find(([t]) => t === query.status)?.[1] ?? query.status} proposals</>}
          >
            <thead>
              <tr>
                <th scope="col">Proposal</th>
                <th scope="col" class="num-col">
                  Amount
                </th>
                <th scope="col">Destination</th>
                <th scope="col">Operation</th>
                <th scope="col">Requested by</th>
                <th scope="col">Age</th>
                <th scope="col">{waiting ? 'Time left' : 'Status'}</th>
              </tr>
            </thead>
            <tbody>
              {items.map(({ proposal, fields, you }) => (
                <InboxRow proposal={proposal} fields={fields} you={you} now={now} waiting={waiting} />
              ))}
            </tbody>
          </ListTable>
        )}
        <p class="pager">
          {query.cursor ? (
            <>
              <a href={inboxHref(query, { cursor: undefined })}>← First page</a>{' '}
            </>
          ) : (
            ''
          )}
          {input.nextCursor ? (
            <a rel="next" href={inboxHref(query, { cursor: input.nextCursor })}>
              Next page →
            </a>
          ) : (
            ''
          )}
        </p>
        <KeyboardHelp />
      </main>
    </Layout>
  );
}

/** The inbox page as a document. */
export function inboxPage(input: InboxPageProps): Page {
  return renderPage(<InboxPage {...input} />);
}

/** Props of {@link InboxQueryErrorPage}. */
export interface InboxQueryErrorPageProps {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly parameter: string;
  readonly message: string;
}

/** The inbox's answer to a query parameter it cannot honour: the parameter named, and a way back. */
export function InboxQueryErrorPage(input: InboxQueryErrorPageProps) {
  return (
    <Layout title="Inbox" nonce={input.nonce} session={input.session} current="inbox">
      <main id="main">
        <div class="page-head">
          <div>
            <h1>Inbox</h1>
          </div>
        </div>
        <div class="banner bad" role="alert" data-testid="query-error">
          <strong>
            The inbox cannot show this list: the <code>{input.parameter}</code> parameter is not valid.
          </strong>{' '}
          <UserText text={input.message} />. Reason <code class="reason-code">invalid_request</code>
        </div>
        <p>
          <a href="/">Back to the inbox</a>
        </p>
      </main>
    </Layout>
  );
}

/** The inbox query error page as a document. */
export function inboxQueryErrorPage(input: InboxQueryErrorPageProps): Page {
  return renderPage(<InboxQueryErrorPage {...input} />);
}
