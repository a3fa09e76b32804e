import { type SqlQuery, sql } from '../sql/sql.js';
import type { ProposalCountQuery, ProposalCounts } from './store.js';

// Larger than any count a store holds, and a valid integer parameter on both backends.
const UNCAPPED = 2 ** 53 - 1;

/** The requester under which the rate counters keep a tenant's total (no principal is empty). */
const TENANT_TOTAL = '';

/**
 * Rate counters older than this (in seconds) are deleted: twice the quota's window, so a server
 * whose clock lags another's by up to a minute still finds its window's counters.
 */
const RATE_KEEP_SECONDS = 120;

/** The counter second of a time (epoch ms). */
export const rateSecondOf = (ms: number): number => Math.floor(ms / 1000);

/**
 * Counts one new proposal in its tenant's and its requester's counter of the second it was made
 * (one statement, inside the insert's transaction), returning each counter's new value: a
 * tenant counter at 1 is the first of its second, when older counters are pruned.
 */
export function countRateSql(tenant: string, requestedBy: string, createdAt: number): SqlQuery {
  const second = rateSecondOf(createdAt);
  // Whole templates (no fragments), so each is compiled once. A requester that is the empty text
  // is counted once, as the tenant (propose refuses it anyway).
  return requestedBy === TENANT_TOTAL
    ? sql`INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created) VALUES (${tenant}, ${TENANT_TOTAL}, ${second}, 1) ON CONFLICT (tenant, requested_by, second) DO UPDATE SET created = countersign_proposal_rates.created + 1 RETURNING requested_by, created`
    : sql`INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created) VALUES (${tenant}, ${requestedBy}, ${second}, 1), (${tenant}, ${TENANT_TOTAL}, ${second}, 1) ON CONFLICT (tenant, requested_by, second) DO UPDATE SET created = countersign_proposal_rates.created + 1 RETURNING requested_by, created`;
}

/** Whether the rows of {@link countRateSql} opened the tenant's counter of a new second. */
export function opensRateSecond(rows: readonly Record<string, unknown>[]): boolean {
  return rows.some((r) => r['requested_by'] === TENANT_TOTAL && Number(r['created']) === 1);
}

/**
 * Deletes a tenant's counters that no window reads any more. Run once per tenant and second (by
 * the proposal that opens the second), so counters never outlive two minutes by more than an
 * idle tenant's last ones.
 */
export function pruneRatesSql(tenant: string, createdAt: number): SqlQuery {
  return sql`DELETE FROM countersign_proposal_rates WHERE tenant = ${tenant} AND second < ${rateSecondOf(createdAt) - RATE_KEEP_SECONDS}`;
}

/**
 * The statement behind `countProposals`. Pending proposals are read from the partial index of
 * pending proposals, stopping at `atMost` (a pending proposal past its expiry is not counted,
 * swept or not). Proposals created since a time are the sum of the per-second counters of the
 * whole seconds after it (at most 61 rows for a quota's minute) plus an exact count of the part
 * of its first second (the (tenant[, requested_by], created_at) index, at most one second of
 * proposals); the oldest is one index seek. So a check costs the same however many proposals the
 * last minute holds.
 */
export function countProposalsSql(tenant: string, query: ProposalCountQuery): SqlQuery {
  const cap = capOf(query);
  // Without `pendingAt`, every pending proposal counts: none expires before the smallest time.
  const live = query.pendingAt ?? Number.MIN_SAFE_INTEGER;
  const since = query.createdSince;
  // Counters hold whole seconds: [since, firstWhole s) is counted from the proposals themselves.
  const firstWhole = Math.ceil(since / 1000);
  const partEnd = firstWhole * 1000;
  const who = query.requestedBy;
  // Whole templates (no fragments), so each is compiled once per dialect.
  if (query.upperBound === true) {
    // The counters of every second the window touches, the first one whole.
    const firstSecond = rateSecondOf(since);
    return who === undefined
      ? sql`SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM countersign_proposals WHERE tenant = ${tenant} AND status = 'pending' AND expires_at > ${live} LIMIT ${cap}) p) AS pending, (SELECT COALESCE(SUM(created), 0) FROM countersign_proposal_rates WHERE tenant = ${tenant} AND requested_by = ${TENANT_TOTAL} AND second >= ${firstSecond}) AS whole`
      : sql`SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM countersign_proposals WHERE tenant = ${tenant} AND requested_by = ${who} AND status = 'pending' AND expires_at > ${live} LIMIT ${cap}) p) AS pending, (SELECT COALESCE(SUM(created), 0) FROM countersign_proposal_rates WHERE tenant = ${tenant} AND requested_by = ${who} AND second >= ${firstSecond}) AS whole`;
  }
  return who === undefined
    ? sql`SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM countersign_proposals WHERE tenant = ${tenant} AND status = 'pending' AND expires_at > ${live} LIMIT ${cap}) p) AS pending, (SELECT COALESCE(SUM(created), 0) FROM countersign_proposal_rates WHERE tenant = ${tenant} AND requested_by = ${TENANT_TOTAL} AND second >= ${firstWhole}) AS whole, (SELECT COUNT(*) FROM (SELECT 1 FROM countersign_proposals WHERE tenant = ${tenant} AND created_at >= ${since} AND created_at < ${partEnd} LIMIT ${cap}) e) AS part, (SELECT created_at FROM countersign_proposals WHERE tenant = ${tenant} AND created_at >= ${since} ORDER BY created_at LIMIT 1) AS oldest`
    : sql`SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM countersign_proposals WHERE tenant = ${tenant} AND requested_by = ${who} AND status = 'pending' AND expires_at > ${live} LIMIT ${cap}) p) AS pending, (SELECT COALESCE(SUM(created), 0) FROM countersign_proposal_rates WHERE tenant = ${tenant} AND requested_by = ${who} AND second >= ${firstWhole}) AS whole, (SELECT COUNT(*) FROM (SELECT 1 FROM countersign_proposals WHERE tenant = ${tenant} AND requested_by = ${who} AND created_at >= ${since} AND created_at < ${partEnd} LIMIT ${cap}) e) AS part, (SELECT created_at FROM countersign_proposals WHERE tenant = ${tenant} AND requested_by = ${who} AND created_at >= ${since} ORDER BY created_at LIMIT 1) AS oldest`;
}

function capOf(query: ProposalCountQuery): number {
  return query.atMost !== undefined && Number.isSafeInteger(query.atMost) && query.atMost >= 0
    ? query.atMost
    : UNCAPPED;
}

/** Reads the one row of {@link countProposalsSql} (PostgreSQL returns counts as strings). */
export function proposalCountsOf(
  row: Record<string, unknown> | undefined,
  query: ProposalCountQuery,
): ProposalCounts {
  const oldest = row?.['oldest'];
  return {
    pending: Number(row?.['pending'] ?? 0),
    created: Math.min(Number(row?.['whole'] ?? 0) + Number(row?.['part'] ?? 0), capOf(query)),
    oldestCreatedAt: oldest === null || oldest === undefined ? null : Number(oldest),
  };
}
