import { isListCursor } from '../../engine/queries.js';
import type { ProposalSort } from '../../store/store.js';
import { PROPOSAL_STATUSES, type ProposalStatus } from '../../store/records.js';

/** The inbox tabs: the two states that need a person, and what was decided lately. */
export type InboxTab = 'pending' | 'needs_reconciliation' | 'recent';

/** What the inbox shows: everything in its URL, so a link or a reload shows the same list. */
export interface InboxQuery {
  /** `recent` (recently decided) or an API status name. */
  readonly status: InboxTab | ProposalStatus;
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
 * this inbox did not make is named.
 */
export function parseInboxQuery(
  read: (name: string) => string | undefined,
): { kind: 'ok'; query: InboxQuery } | InvalidInboxQuery {
  const status = read('status') || 'pending';
  if (status !== 'recent' && !(PROPOSAL_STATUSES as readonly string[]).includes(status))
    return {
      kind: 'invalid',
      parameter: 'status',
      message: `status must be recent or a proposal status (${PROPOSAL_STATUSES.join(', ')})`,
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
    query: { status: status as InboxQuery['status'], sort: sort as ProposalSort, ...text },
  };
}

/** The inbox URL of `query` with `change` applied (an undefined value drops the parameter). */
export function inboxHref(
  query: InboxQuery,
  change: Partial<Record<keyof InboxQuery, string | undefined>> = {},
): string {
  const merged: Partial<Record<keyof InboxQuery, string | undefined>> = { ...query, ...change };
  const params = new URLSearchParams();
  for (const name of ['status', 'operation', 'requester', 'q', 'sort', 'cursor'] as const) {
    const value = merged[name];
    if (value === undefined || value === '') continue;
    if ((name === 'status' && value === 'pending') || (name === 'sort' && value === 'created')) continue;
    params.set(name, value);
  }
  const search = params.toString();
  return search ? `/?${search}` : '/';
}
