import type { ProposalCountQuery, ProposalCounts } from './store.js';

// Larger than any count a store holds, and a valid integer parameter on both backends.
const UNCAPPED = 2 ** 53 - 1;

/**
 * The statement behind `countProposals`, with `?` placeholders (the PostgreSQL store numbers them).
 * The pending count reads the partial index of pending proposals; the recent count and the oldest
 * read the (tenant[, requested_by], created_at) index. Each count stops at `atMost`, so a check
 * costs at most the limit it checks, however many proposals are stored.
 */
export function countProposalsSql(tenant: string, query: ProposalCountQuery): [string, unknown[]] {
  const who = query.requestedBy === undefined ? '' : ' AND requested_by = ?';
  const scope = [tenant, ...(query.requestedBy === undefined ? [] : [query.requestedBy])];
  const cap =
    query.atMost !== undefined && Number.isSafeInteger(query.atMost) && query.atMost >= 0
      ? query.atMost
      : UNCAPPED;
  const from = `FROM countersign_proposals WHERE tenant = ?${who}`;
  const live = query.pendingAt === undefined ? '' : ' AND expires_at > ?';
  const liveParams = query.pendingAt === undefined ? [] : [query.pendingAt];
  const sql =
    `SELECT (SELECT COUNT(*) FROM (SELECT 1 ${from} AND status = 'pending'${live} LIMIT ?) p) AS pending, ` +
    `(SELECT COUNT(*) FROM (SELECT 1 ${from} AND created_at >= ? LIMIT ?) c) AS created, ` +
    `(SELECT created_at ${from} AND created_at >= ? ORDER BY created_at LIMIT 1) AS oldest`;
  return [
    sql,
    [...scope, ...liveParams, cap, ...scope, query.createdSince, cap, ...scope, query.createdSince],
  ];
}

/** Reads the one row of {@link countProposalsSql} (PostgreSQL returns counts as strings). */
export function proposalCountsOf(row: Record<string, unknown> | undefined): ProposalCounts {
  const oldest = row?.['oldest'];
  return {
    pending: Number(row?.['pending'] ?? 0),
    created: Number(row?.['created'] ?? 0),
    oldestCreatedAt: oldest === null || oldest === undefined ? null : Number(oldest),
  };
}
