import type { ProposalCountQuery, ProposalCounts } from './store.js';

/**
 * The statement behind `countProposals`, with `?` placeholders (the PostgreSQL store numbers them).
 * The pending count reads the partial index of pending proposals; the recent count reads the
 * (tenant[, requested_by], created_at) index, so neither scans more than the rows it counts.
 */
export function countProposalsSql(tenant: string, query: ProposalCountQuery): [string, unknown[]] {
  const who = query.requestedBy === undefined ? '' : ' AND requested_by = ?';
  const whoParams = query.requestedBy === undefined ? [] : [query.requestedBy];
  const sql =
    `SELECT (SELECT COUNT(*) FROM countersign_proposals WHERE tenant = ?${who} AND status = 'pending') AS pending, ` +
    'COUNT(*) AS created, MIN(created_at) AS oldest ' +
    `FROM countersign_proposals WHERE tenant = ?${who} AND created_at >= ?`;
  return [sql, [tenant, ...whoParams, tenant, ...whoParams, query.createdSince]];
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
