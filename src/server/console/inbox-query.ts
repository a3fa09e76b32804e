import { isListCursor } from '../../engine/queries.js';
import type { ProposalSort } from '../../store/store.js';
import { PROPOSAL_STATUSES, type ProposalStatus } from '../../store/records.js';

/**
 * The inbox tabs: what this operator may still decide ("Needs you"), the two states that need a
 * person, and what was decided lately.
 */
export type InboxTab = 'needs' | 'pending' | 'needs_reconciliation' | 'recent';

/** What the inbox shows: everything in its URL, so a link or a reload shows the same list. */
export interface InboxQuery {
  /** `needs` ("Needs you"), `recent` (recently decided) or an API status name. */
  readonly status: InboxTab | ProposalStatus;
  /** The view shown without a `status` parameter: `needs` for approvers, `pending` for others. */
  readonly home: 'needs' | 'pending';
  readonly operation?: string;
  readonly requester?: string;
  readonly q?: string;
  readonly sort: ProposalSort;
  readonly cursor?: string;
}

/** A query parameter the inbox cannot honour, named so the page can say which. */
export interface InvalidInboxQuery {
  readonly kind: 'invalid';
  readonly parameter: string;
  readonly message: string;
}

/** The sorts the inbox offers, with their labels. */
export const INBOX_SORTS: readonly (readonly [ProposalSort, string])[] = [
  ['created', 'Newest first'],
  ['expires', 'Least time left'],
  ['amount', 'Largest amount'],
];

const MAX_TEXT = 200;

/**
 * Reads the inbox's query string; an unknown `status` or `sort`, an oversized text or a cursor
 * this inbox did not make is named. Without `status` the list is `home`.
 */
export function parseInboxQuery(
  read: (name: string) => string | undefined,
  home: InboxQuery['home'] = 'pending',
): { kind: 'ok'; query: InboxQuery } | InvalidInboxQuery {
  const status = read('status') || home;
  if (status !== 'recent' && status !== 'needs' && !(PROPOSAL_STATUSES as readonly string[]).includes(status))
    return {
      kind: 'invalid',
      parameter: 'status',
      message: `status must be needs, recent or a proposal status (${PROPOSAL_STATUSES.join(', ')})`,
    };
  const sort = read('sort') || 'created';
  if (!INBOX_SORTS.some(([s]) => s === sort))
    return { kind: 'invalid', parameter: 'sort', message: 'sort must be expires, created or amount' };
  const text: Record<string, string> = {};
  for (const name of ['operation', 'requester', 'q', 'cursor'] as const) {
    const value = read(name)?.trim();
    if (!value) continue;
    if (value.length > MAX_TEXT)
      return { kind: 'invalid', parameter: name, message: `${name} is longer than ${MAX_TEXT} characters` };
    text[name] = value;
  }
  if (text['cursor'] !== undefined && !isListCursor(text['cursor']))
    return { kind: 'invalid', parameter: 'cursor', message: 'cursor must be a link this inbox made' };
  return {
    kind: 'ok',
    query: { status: status as InboxQuery['status'], home, sort: sort as ProposalSort, ...text },
  };
}

type HrefChange = Partial<Record<Exclude<keyof InboxQuery, 'home'>, string | undefined>>;

/**
 * The inbox URL of `query` with `change` applied (an undefined value drops the parameter). The
 * status is left out when it is the operator's home view.
 */
export function inboxHref(query: InboxQuery, change: HrefChange = {}): string {
  const merged: HrefChange = { ...query, ...change };
  const params = new URLSearchParams();
  for (const name of ['status', 'operation', 'requester', 'q', 'sort', 'cursor'] as const) {
    const value = merged[name];
    if (value === undefined || value === '') continue;
    if ((name === 'status' && value === query.home) || (name === 'sort' && value === 'created')) continue;
    params.set(name, value);
  }
  const search = params.toString();
  return search ? `/?${search}` : '/';
}
