import type { ProposalRecord } from '../store/records.js';
import type { StoreReader } from '../store/store.js';
import type { EngineContext } from './engine-context.js';
import { type Proposal, toProposal } from './proposal.js';

/** The most proposals with the same scope one lookup lists (the page says "N or more"). */
export const SAME_SCOPE_LIMIT = 20;

/**
 * The proposals a reviewer must see beside one proposal, all of the same tenant: the edit it
 * supersedes and the edit that superseded it; the proposal it replaces after "revision required"
 * and the one that replaced it; and the other pending proposals with the same scope.
 */
export interface RelatedProposals {
  /** The proposal this one was edited from (`supersedes`). */
  readonly supersedes?: Proposal;
  /** The edit that replaced this one (`supersededBy`). */
  readonly supersededBy?: Proposal;
  /**
   * The latest earlier proposal of the same operation and resource whose outcome was
   * `revision_required`: this one is made again after it (not an edit, so no `supersedes`).
   */
  readonly replaces?: Proposal;
  /**
   * For a proposal whose outcome was `revision_required`: the first later proposal of the same
   * operation and resource, the one made again after it.
   */
  readonly replacedBy?: Proposal;
  /** Other pending, unexpired proposals with the same scope digest, newest first (at most {@link SAME_SCOPE_LIMIT}). */
  readonly sameScope: readonly Proposal[];
  /** True when there may be more than {@link RelatedProposals.sameScope} lists. */
  readonly sameScopeTruncated: boolean;
}

async function one(tx: StoreReader, tenant: string, id: string | null): Promise<ProposalRecord | undefined> {
  return id === null ? undefined : tx.getProposal(tenant, id);
}

/**
 * Looks up the proposals related to `proposal` in its tenant (see {@link RelatedProposals}).
 * Every lookup names the tenant; none reads another tenant's proposals.
 */
export async function relatedProposals(
  ctx: Pick<EngineContext, 'store' | 'clock'>,
  proposal: Proposal,
): Promise<RelatedProposals> {
  const { tenant } = proposal;
  const now = ctx.clock.now();
  const same = { resource: proposal.resource, operation: proposal.operation };
  const position = { createdAt: proposal.createdAt.getTime(), id: proposal.id };
  const found = await ctx.store.read(async (tx) => ({
    supersedes: await one(tx, tenant, proposal.supersedes),
    supersededBy: await one(tx, tenant, proposal.supersededBy),
    // An edit links to the proposal it was edited from instead.
    replaces:
      proposal.supersedes === null
        ? (
            await tx.listProposals(tenant, {
              ...same,
              status: 'revision_required',
              before: position,
              limit: 1,
            })
          )[0]
        : undefined,
    replacedBy:
      proposal.status === 'revision_required'
        ? (await tx.listProposals(tenant, { ...same, since: position, limit: 1 }))[0]
        : undefined,
    sameScope: await tx.listProposals(tenant, {
      scopeDigest: proposal.scopeDigest,
      status: 'pending',
      exceptId: proposal.id,
      limit: SAME_SCOPE_LIMIT + 1,
    }),
  }));
  // One past its expiry waits for no one, swept or not.
  const waiting = found.sameScope.filter((r) => r.expiresAt > now);
  const links = (['supersedes', 'supersededBy', 'replaces', 'replacedBy'] as const).flatMap((key) => {
    const record = found[key];
    return record ? [[key, toProposal(record, now)] as const] : [];
  });
  return {
    ...(Object.fromEntries(links) as Partial<Record<(typeof links)[number][0], Proposal>>),
    sameScope: waiting.slice(0, SAME_SCOPE_LIMIT).map((r) => toProposal(r, now)),
    sameScopeTruncated: found.sameScope.length > SAME_SCOPE_LIMIT,
  };
}
