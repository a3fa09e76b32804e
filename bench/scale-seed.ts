import { AUDIT_COLUMNS, PROPOSAL_COLUMNS } from '../src/store/sql-columns.js';

/** The tenant whose inbox is measured; the other tenants are `tenant-1` … `tenant-9`. */
export const MEASURED_TENANT = 'acme';
/** Bulk row k belongs to tenant k mod TENANTS (0 is the measured one). */
export const TENANTS = 10;
/** Bulk rows are this far apart in time, newest (k = 0) first: one proposal a second over all tenants. */
export const ROW_SPACING_MS = 1000;
/** Only the newest bulk rows (k below this) may still be pending: older ones were decided or expired. */
export const PENDING_WINDOW = 20_000;
/**
 * Bulk audit events take sequence numbers from here on, far above the real events of a tenant's
 * chain, so the engine's own appends never collide with them. They are not chained: a bulk-seeded
 * tenant's chain does not verify past its real events (the measured paths never verify a chain).
 */
export const BULK_SEQ_BASE = 1_000_000_000_000;

/** Where the bulk copies come from: real rows the engine wrote, all in the measured tenant. */
export interface SeedTemplates {
  /** A pending proposal: every copy takes its contract columns (arguments, scope, preview, digest). */
  readonly pendingId: string;
  /** A proposal that ran and succeeded: succeeded copies take its outcome. */
  readonly succeededId: string;
}

/**
 * The status of bulk row k, as SQL on the integer `k` (the same text works on SQLite and
 * PostgreSQL). Per tenant (j = k / TENANTS): 1 in 3 of the newest rows still pending (so even 10³
 * proposals fill a first page), 0.1 % needing reconciliation, 5 % declined, 5 % expired, 2 %
 * failed, the rest succeeded.
 */
const STATUS_OF_K = `CASE
    WHEN k < ${PENDING_WINDOW} AND (k / ${TENANTS}) % 3 = 0 THEN 'pending'
    WHEN (k / ${TENANTS}) % 1000 = 1 THEN 'needs_reconciliation'
    WHEN (k / ${TENANTS}) % 20 = 2 THEN 'declined'
    WHEN (k / ${TENANTS}) % 20 = 3 THEN 'expired'
    WHEN (k / ${TENANTS}) % 50 = 4 THEN 'terminal_failure'
    ELSE 'succeeded' END`;

const EXECUTED = "('succeeded', 'terminal_failure', 'needs_reconciliation')";
const UNDECIDED = "('pending', 'expired')";

/** Bulk row k's tenant (tn), creation time (ca) and status (st), over a row source with column k. */
function bulkRows(source: string, newestAt: number): string {
  return `(SELECT k,
    CASE WHEN k % ${TENANTS} = 0 THEN '${MEASURED_TENANT}' ELSE 'tenant-' || (k % ${TENANTS}) END AS tn,
    ${newestAt} - k * ${ROW_SPACING_MS} AS ca,
    ${STATUS_OF_K} AS st
  FROM ${source}) s`;
}

const inMeasured = (column: string, id: string) => `tenant = '${MEASURED_TENANT}' AND ${column} = '${id}'`;

/**
 * One `INSERT … SELECT` that copies the pending template into bulk proposals `k` of `source` (a
 * row source with one integer column `k`: a recursive CTE on SQLite, `generate_series` on
 * PostgreSQL). Each copy gets a new id, tenant, run, status and times; its contract columns are
 * the template's bytes, so a copy in the measured tenant is as valid as the row it came from.
 * Every value is a number or text this benchmark chose: nothing comes from outside.
 */
export function bulkProposalsSql(source: string, templates: SeedTemplates, newestAt: number): string {
  const computed: Record<string, string> = {
    tenant: 's.tn',
    id: "'prp_zs' || s.k",
    run_id: "'run-s' || (s.k / 20)",
    status: 's.st',
    created_at: 's.ca',
    expires_at: `CASE WHEN s.st = 'pending' THEN s.ca + 2592000000 ELSE s.ca + 1800000 END`,
    decided_by: `CASE WHEN s.st IN ${UNDECIDED} THEN NULL ELSE 'user:ops@example.test' END`,
    decided_at: `CASE WHEN s.st IN ${UNDECIDED} THEN NULL ELSE s.ca + 60000 END`,
    approval_kind: `CASE WHEN s.st IN ${EXECUTED} THEN 'exact' ELSE NULL END`,
    current_attempt: `CASE WHEN s.st IN ${EXECUTED} THEN 1 ELSE 0 END`,
    outcome_json: `CASE WHEN s.st = 'succeeded' THEN (SELECT outcome_json FROM countersign_proposals WHERE ${inMeasured('id', templates.succeededId)}) ELSE NULL END`,
    updated_at: `CASE WHEN s.st = 'pending' THEN s.ca ELSE s.ca + 60000 END`,
  };
  const columns = PROPOSAL_COLUMNS.map(([, c]) => c);
  return `INSERT INTO countersign_proposals (${columns.join(', ')})
SELECT ${columns.map((c) => computed[c] ?? `t.${c}`).join(', ')}
FROM ${bulkRows(source, newestAt)}, countersign_proposals t
WHERE t.${inMeasured('id', templates.pendingId)}`;
}

/**
 * The audit events of bulk proposals `k` of `source`: a `proposed` event for each, and a decision
 * event for each that is no longer pending, copied from the pending template's `proposed` event.
 */
export function bulkAuditSql(source: string, templates: SeedTemplates, newestAt: number): string {
  const computed: Record<string, string> = {
    tenant: 's.tn',
    seq: `${BULK_SEQ_BASE} + s.k * 2 + e.n`,
    id: "'evt_zs' || s.k || '_' || e.n",
    proposal_id: "'prp_zs' || s.k",
    run_id: "'run-s' || (s.k / 20)",
    step: `CASE WHEN e.n = 0 THEN 'proposed' WHEN s.st IN ('declined', 'expired') THEN s.st ELSE 'approved' END`,
    at: 's.ca + e.n * 60000',
  };
  const columns = AUDIT_COLUMNS.map(([, c]) => c);
  return `INSERT INTO countersign_audit_events (${columns.join(', ')})
SELECT ${columns.map((c) => computed[c] ?? `t.${c}`).join(', ')}
FROM ${bulkRows(source, newestAt)}, (SELECT 0 AS n UNION ALL SELECT 1) e, countersign_audit_events t
WHERE t.${inMeasured('proposal_id', templates.pendingId)} AND t.step = 'proposed' AND (e.n = 0 OR s.st <> 'pending')`;
}

/** SQLite's row source of bulk rows [from, to): a recursive CTE named `g`, `?` for from and to. */
export function sqliteBulk(sql: (source: string) => string): string {
  return `WITH RECURSIVE g(k) AS (SELECT ? UNION ALL SELECT k + 1 FROM g WHERE k + 1 < ?)\n${sql('g')}`;
}

/** PostgreSQL's row source of bulk rows [$1, $2): `generate_series`. */
export function postgresBulk(sql: (source: string) => string): string {
  return sql('generate_series($1::bigint, $2::bigint - 1) AS g(k)');
}
