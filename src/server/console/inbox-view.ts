import type { Engine } from '../../engine/create-engine.js';
import type { Proposal } from '../../engine/proposal.js';
import type { CountInput } from '../../engine/queries.js';
import type { Actor } from '../../operation/actor.js';
import { FINAL_STATUSES, type ProposalStatus } from '../../store/records.js';
import type { InboxQuery } from './inbox-query.js';
import type { YourPart } from './pages/inbox-page.js';

// The "recently decided" tab: decided or running proposals changed within a day.
const RECENT: readonly ProposalStatus[] = [...FINAL_STATUSES, 'executing'];
const RECENT_MS = 24 * 60 * 60_000;

/** Whether an operator's inbox opens on "Needs you": they hold one of the engine's approver roles. */
export function homeViewOf(engine: Pick<Engine, 'approverRoles'>, actor: Actor): InboxQuery['home'] {
  return actor.kind === 'operator' && actor.roles.some((r) => engine.approverRoles.includes(r))
    ? 'needs'
    : 'pending';
}

/** The engine filter of one inbox tab for `actor` at `now`. */
export function tabFilter(status: InboxQuery['status'], actor: Actor, now: number): CountInput {
  if (status === 'recent') return { status: RECENT, updatedSince: now - RECENT_MS };
  if (status === 'needs') return { status: 'pending', decidableBy: actor };
  return { status };
}

/** The engine filter of an inbox's filters (operation, requester, search), without its tab. */
export function queryFilter(query: InboxQuery): CountInput {
  return {
    ...(query.operation !== undefined ? { operation: query.operation } : {}),
    ...(query.requester !== undefined ? { requestedBy: query.requester } : {}),
    ...(query.q !== undefined ? { search: query.q } : {}),
  };
}

/** What the row of `proposal` says about `actor`'s part in it (see {@link YourPart}). */
export function yourPart(engine: Pick<Engine, 'proposals'>, actor: Actor, proposal: Proposal): YourPart {
  const pending = proposal.status === 'pending';
  const approved = pending && proposal.approvals.given.some((g) => g.by === actor.id);
  const edited = proposal.editedBy === actor.id;
  const right = pending ? engine.proposals.mayDecide(actor, proposal, 'approve') : undefined;
  const waiting =
    right?.kind === 'refused' &&
    (right.reason === 'already_approved' || right.reason === 'separation_of_duties');
  return { approved, edited, waiting };
}

function titleOf(preview: unknown): string | undefined {
  if (typeof preview !== 'object' || preview === null || Array.isArray(preview)) return undefined;
  const title = Reflect.get(preview, 'title');
  return typeof title === 'string' ? title : undefined;
}

const DIGEST_PREFIX = /^[0-9a-f]{4,64}$/;

/**
 * Whether one proposal belongs in the inbox list of `query` for `actor` at `now`: the same tab and
 * filters the list is read with (the store's search: the id, words of the title, or a digest
 * prefix), applied to one proposal, so a live notice counts only rows the list would show.
 */
export function inListOf(
  engine: Pick<Engine, 'proposals'>,
  actor: Actor,
  query: InboxQuery,
  proposal: Proposal,
  now: number,
): boolean {
  if (proposal.tenant !== actor.tenant) return false;
  if (query.operation !== undefined && proposal.operation !== query.operation) return false;
  if (query.requester !== undefined && proposal.requestedBy !== query.requester) return false;
  const q = query.q?.trim();
  if (q) {
    const lower = q.toLowerCase();
    const found =
      proposal.id === q ||
      (titleOf(proposal.preview)?.toLowerCase().includes(lower) ?? false) ||
      (DIGEST_PREFIX.test(lower) && proposal.digest.startsWith(lower));
    if (!found) return false;
  }
  switch (query.status) {
    case 'needs':
      return (
        proposal.status === 'pending' &&
        engine.proposals.mayDecide(actor, proposal, 'approve').kind === 'allowed'
      );
    case 'recent': {
      const changed = proposal.decidedAt?.getTime() ?? proposal.createdAt.getTime();
      return RECENT.includes(proposal.status) && changed >= now - RECENT_MS;
    }
    default:
      return proposal.status === query.status;
  }
}
