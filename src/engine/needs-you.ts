import type { ProposalStatus } from '../store/records.js';
import type { Actor } from '../operation/actor.js';
import { decisionRight, factsOf } from './decision-right.js';
import type { EngineContext } from './engine-context.js';
import type { Proposal } from './proposal.js';
import { type CountInput, cursorAfter, type ListInput, listProposals, type ProposalPage } from './queries.js';

// Pending proposals are read in pages this large while filtering them for one principal. A tenant
// holds at most its pending quota of them (1,000 by default), so a filtered list reads a few pages.
const SCAN_PAGE = 200;

/**
 * Whether `actor` may still decide `proposal` ("Needs you"): it is pending and not expired (the
 * public status already reads `expired` past its expiry) and the engine would let the actor
 * approve it — the same {@link decisionRight} that `engine.proposals.mayDecide` and `approve` apply: tenant,
 * approver role, the operation's `authorize`, the frozen policy's roles, separation of duties
 * (proposer; editor unless allowed, never toward a quorum), not already among its approvers.
 */
export function needsDecisionBy(ctx: EngineContext, actor: Actor, proposal: Proposal): boolean {
  return (
    proposal.status === 'pending' &&
    proposal.tenant === actor.tenant &&
    decisionRight(ctx, actor, factsOf(proposal), 'approve').kind === 'allowed'
  );
}

function pendingOnly(status: ListInput['status']): ProposalStatus | undefined {
  if (status === undefined) return 'pending';
  const statuses: readonly ProposalStatus[] = typeof status === 'string' ? [status] : status;
  return statuses.includes('pending') ? 'pending' : undefined;
}

/**
 * One page of the proposals `input.decidableBy` may still decide, in the list's order and with its
 * cursor: the tenant's pending proposals matching the other filters are read page by page and
 * kept when {@link needsDecisionBy} holds, until the page is full. The next cursor is the last row
 * kept, so the next page continues exactly after it.
 */
export async function listNeeding(
  ctx: EngineContext,
  tenant: string,
  input: ListInput,
): Promise<ProposalPage> {
  const actor = input.decidableBy;
  const status = pendingOnly(input.status);
  if (!actor || actor.tenant !== tenant || status === undefined) return { items: [] };
  const limit = Math.min(Math.max(Math.trunc(input.limit ?? 50), 1), 200);
  const sort = input.sort ?? 'created';
  const { decidableBy: _, limit: __, cursor: first, ...filter } = input;
  const kept: Proposal[] = [];
  let cursor = first;
  for (;;) {
    const page = await listProposals(ctx, tenant, {
      ...filter,
      status,
      sort,
      limit: SCAN_PAGE,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const proposal of page.items) {
      if (!needsDecisionBy(ctx, actor, proposal)) continue;
      if (kept.length === limit) {
        const last = kept[kept.length - 1]!;
        return { items: kept, nextCursor: cursorAfter(sort, last) };
      }
      kept.push(proposal);
    }
    if (!page.nextCursor) return { items: kept };
    cursor = page.nextCursor;
  }
}

/** How many of the tenant's proposals `input.decidableBy` may still decide (every page). */
export async function countNeeding(ctx: EngineContext, tenant: string, input: CountInput): Promise<number> {
  const { decidableBy: actor, ...filter } = input;
  const status = pendingOnly(input.status);
  if (!actor || actor.tenant !== tenant || status === undefined) return 0;
  let count = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await listProposals(ctx, tenant, {
      ...filter,
      status,
      limit: SCAN_PAGE,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const proposal of page.items) if (needsDecisionBy(ctx, actor, proposal)) count += 1;
    if (!page.nextCursor) return count;
    cursor = page.nextCursor;
  }
}
