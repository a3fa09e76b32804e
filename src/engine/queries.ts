import { shortHash } from '../canonical/digest.js';
import type { AuditEvent } from '../audit/event.js';
import type { ProposalStatus } from '../store/records.js';
import type { EngineContext } from './engine-context.js';
import { type Proposal, toProposal } from './proposal.js';

/** One page of a tenant's proposals, newest first. */
export interface ProposalPage {
  readonly items: readonly Proposal[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  readonly nextCursor?: string;
}

/** How to narrow a list of proposals. */
export interface ListInput {
  readonly status?: ProposalStatus | readonly ProposalStatus[];
  readonly runId?: string;
  readonly operation?: string;
  /** Only the proposals this principal made; the cursor then never names anyone else's. */
  readonly requestedBy?: string;
  /** 1–200, default 50. */
  readonly limit?: number;
  readonly cursor?: string;
}

/** One proposal of a tenant, or undefined (another tenant's proposal is indistinguishable from a missing one). */
export async function getProposal(
  ctx: EngineContext,
  tenant: string,
  proposalId: string,
): Promise<Proposal | undefined> {
  const record = await ctx.store.read((tx) => tx.getProposal(tenant, proposalId));
  return record ? toProposal(record, ctx.clock.now()) : undefined;
}

function decodeCursor(cursor: string | undefined): { createdAt: number; id: string } | undefined {
  if (!cursor) return undefined;
  const match = /^(\d{1,15})~(prp_[0-9a-z]{1,40})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? { createdAt: Number(match[1]), id: match[2]! } : undefined;
}

/** A tenant's proposals, newest first, paginated by an opaque cursor. */
export async function listProposals(
  ctx: EngineContext,
  tenant: string,
  input: ListInput = {},
): Promise<ProposalPage> {
  const limit = Math.min(Math.max(Math.trunc(input.limit ?? 50), 1), 200);
  const before = decodeCursor(input.cursor);
  const records = await ctx.store.read((tx) =>
    tx.listProposals(tenant, {
      limit: limit + 1,
      ...(input.status !== undefined ? { status: input.status } : {}),
      ...(input.runId !== undefined ? { runId: input.runId } : {}),
      ...(input.operation !== undefined ? { operation: input.operation } : {}),
      ...(input.requestedBy !== undefined ? { requestedBy: input.requestedBy } : {}),
      ...(before ? { before } : {}),
    }),
  );
  const page = records.slice(0, limit);
  const last = page[page.length - 1];
  const now = ctx.clock.now();
  return {
    items: page.map((r) => toProposal(r, now)),
    ...(records.length > limit && last
      ? { nextCursor: Buffer.from(`${last.createdAt}~${last.id}`).toString('base64url') }
      : {}),
  };
}

/** An audit event with the short hashes an operator matches by eye. */
export interface AuditLine extends AuditEvent {
  readonly short: {
    readonly proposed?: string;
    readonly seen?: string;
    readonly approved?: string;
    readonly requested?: string;
  };
}

/** Every audit event of one proposal, in order, with short hashes. */
export async function proposalAudit(
  ctx: EngineContext,
  tenant: string,
  proposalId: string,
): Promise<AuditLine[]> {
  const events = await ctx.store.read((tx) => tx.listAudit(tenant, { proposalId, limit: 10_000 }));
  return events.map((e) => ({
    ...e,
    short: Object.fromEntries(Object.entries(e.digests).map(([k, v]) => [k, shortHash(v as string)])),
  }));
}
