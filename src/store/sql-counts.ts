import { type SqlQuery, sql } from './sql/sql.js';
import type { ProposalCountQuery, ProposalCounts } from './store.js';

// Larger than any count a store holds, and a valid integer parameter on both backends.
const UNCAPPED = 2 ** 53 - 1;

/**
 * The statement behind `countProposals`. The pending count reads the partial index of pending
 * proposals; the recent count and the oldest read the (tenant[, requested_by], created_at) index.
 * Each count stops at `atMost`, so a check costs at most the limit it checks, however many
 * proposals are stored.
 */
export function countProposalsSql(tenant: string, query: ProposalCountQuery): SqlQuery {
  const who = query.requestedBy === undefined ? sql.empty : sql` AND requested_by = ${query.requestedBy}`;
  const cap =
    query.atMost !== undefined && Number.isSafeInteger(query.atMost) && query.atMost >= 0
      ? query.atMost
      : UNCAPPED;
  const from = sql`FROM countersign_proposals WHERE tenant = ${tenant}${who}`;
  const live = query.pendingAt === undefined ? sql.empty : sql` AND expires_at > ${query.pendingAt}`;
  const since = query.createdSince;
  return sql`SELECT (SELECT COUNT(*) FROM (SELECT 1 ${from} AND status = 'pending'${live} LIMIT ${cap}) p) AS pending, (SELECT COUNT(*) FROM (SELECT 1 ${from} AND created_at >= ${since} LIMIT ${cap}) c) AS created, (SELECT created_at ${from} AND created_at >= ${since} ORDER BY created_at LIMIT 1) AS oldest`;
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
