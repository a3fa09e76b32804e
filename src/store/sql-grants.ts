import { APPROVAL_COLUMNS, GRANT_COLUMNS } from './sql-columns.js';
import { type SqlQuery, sql, valuesStatement } from '../sql/sql.js';
import type { GrantQuery, GrantStateSeal } from './store.js';

type GrantCursor = NonNullable<GrantQuery['before']>;

const grantColumns = GRANT_COLUMNS.map(([, c]) => c).join(', ');
const approvalColumns = APPROVAL_COLUMNS.map(([, c]) => c).join(', ');

/** The grant and quorum-approval statements of the SQL store. */
export const GRANT_SQL = Object.freeze({
  /** Values in `GRANT_COLUMNS` order. */
  insert: valuesStatement(
    `INSERT INTO countersign_grants (${grantColumns}) VALUES (`,
    GRANT_COLUMNS.length,
    ')',
  ),
  get: (tenant: string, id: string): SqlQuery =>
    sql`SELECT * FROM countersign_grants WHERE tenant = ${tenant} AND id = ${id}`,
  list: (tenant: string, limit: number): SqlQuery =>
    sql`SELECT * FROM countersign_grants WHERE tenant = ${tenant} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
  listBySubject: (tenant: string, subject: string, limit: number): SqlQuery =>
    sql`SELECT * FROM countersign_grants WHERE tenant = ${tenant} AND subject = ${subject} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
  /** `list`, from the grant before `before` on (keyset paging). */
  listBefore: (tenant: string, before: GrantCursor, limit: number): SqlQuery =>
    sql`SELECT * FROM countersign_grants WHERE tenant = ${tenant} AND (created_at < ${before.createdAt} OR (created_at = ${before.createdAt} AND id < ${before.id})) ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
  /** `listBySubject`, from the grant before `before` on (keyset paging). */
  listBySubjectBefore: (tenant: string, subject: string, before: GrantCursor, limit: number): SqlQuery =>
    sql`SELECT * FROM countersign_grants WHERE tenant = ${tenant} AND subject = ${subject} AND (created_at < ${before.createdAt} OR (created_at = ${before.createdAt} AND id < ${before.id})) ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
  /** Locks a grant row until commit (where rows lock), before its audit is read. */
  lock: (tenant: string, id: string): SqlQuery =>
    sql`SELECT id FROM countersign_grants WHERE tenant = ${tenant} AND id = ${id} FOR UPDATE`,
  /**
   * The grant row with the approvals (`audited_approvals`) and revocation (`audited_revoked`, 0 or
   * 1) the audit records of it, chained or queued: one statement, so one snapshot on PostgreSQL,
   * where the chaining pass moves events from the queue to the chain in one transaction. The
   * literal `reason` and `step` let both databases use the partial indexes of migration 17.
   */
  history: (tenant: string, id: string): SqlQuery =>
    sql`SELECT g.*, (SELECT COUNT(*) FROM countersign_audit_events e WHERE e.tenant = ${tenant} AND e.actor = ${`grant:${id}`} AND e.reason = 'approved_by_grant') + (SELECT COUNT(*) FROM countersign_audit_queue q WHERE q.tenant = ${tenant} AND q.actor = ${`grant:${id}`} AND q.reason = 'approved_by_grant') AS audited_approvals, CASE WHEN EXISTS (SELECT 1 FROM countersign_audit_events e WHERE e.tenant = ${tenant} AND e.proposal_id = ${id} AND e.step = 'revoked' AND e.reason = 'grant_revoked') OR EXISTS (SELECT 1 FROM countersign_audit_queue q WHERE q.tenant = ${tenant} AND q.proposal_id = ${id} AND q.step = 'revoked' AND q.reason = 'grant_revoked') THEN 1 ELSE 0 END AS audited_revoked FROM countersign_grants g WHERE g.tenant = ${tenant} AND g.id = ${id}`,
  /** One compare-and-set: concurrent proposals can never spend past a cap. */
  spend: (tenant: string, id: string, spend: { readonly amount: number; readonly now: number }): SqlQuery =>
    sql`UPDATE countersign_grants SET used_count = used_count + 1, used_total = used_total + ${spend.amount} WHERE tenant = ${tenant} AND id = ${id} AND revoked_at IS NULL AND expires_at > ${spend.now} AND (cap_uses IS NULL OR used_count + 1 <= cap_uses) AND (cap_total IS NULL OR used_total + ${spend.amount} <= cap_total)`,
  /** `spend`, resealed: only while the usage is still the one the new seal was computed from. */
  spendSealed: (
    tenant: string,
    id: string,
    spend: { readonly amount: number; readonly now: number; readonly sealed: GrantStateSeal },
  ): SqlQuery =>
    sql`UPDATE countersign_grants SET used_count = used_count + 1, used_total = used_total + ${spend.amount}, seal = ${spend.sealed.seal} WHERE tenant = ${tenant} AND id = ${id} AND revoked_at IS NULL AND expires_at > ${spend.now} AND (cap_uses IS NULL OR used_count + 1 <= cap_uses) AND (cap_total IS NULL OR used_total + ${spend.amount} <= cap_total) AND used_count = ${spend.sealed.from.usedCount} AND used_total = ${spend.sealed.from.usedTotal}`,
  /** Records one quorum approval (values in `APPROVAL_COLUMNS` order); a second by the same approver inserts nothing (0 changes). */
  insertApproval: valuesStatement(
    `INSERT INTO countersign_approvals (${approvalColumns}) VALUES (`,
    APPROVAL_COLUMNS.length,
    ') ON CONFLICT (tenant, proposal_id, approver) DO NOTHING',
  ),
  listApprovals: (tenant: string, proposalId: string): SqlQuery =>
    sql`SELECT * FROM countersign_approvals WHERE tenant = ${tenant} AND proposal_id = ${proposalId} ORDER BY at, approver`,
  listPendingApprovals: (tenant: string): SqlQuery =>
    sql`SELECT a.* FROM countersign_approvals a JOIN countersign_proposals p ON p.tenant = a.tenant AND p.id = a.proposal_id WHERE a.tenant = ${tenant} AND p.status = 'pending' ORDER BY a.proposal_id, a.at, a.approver`,
  deleteApproval: (tenant: string, proposalId: string, approver: string): SqlQuery =>
    sql`DELETE FROM countersign_approvals WHERE tenant = ${tenant} AND proposal_id = ${proposalId} AND approver = ${approver}`,
  revoke: (tenant: string, id: string, revoke: { readonly by: string; readonly now: number }): SqlQuery =>
    sql`UPDATE countersign_grants SET revoked_at = ${revoke.now}, revoked_by = ${revoke.by} WHERE tenant = ${tenant} AND id = ${id} AND revoked_at IS NULL`,
  /** `revoke`, resealed: only while the usage is still the one the new seal was computed from. */
  revokeSealed: (
    tenant: string,
    id: string,
    revoke: { readonly by: string; readonly now: number; readonly sealed: GrantStateSeal },
  ): SqlQuery =>
    sql`UPDATE countersign_grants SET revoked_at = ${revoke.now}, revoked_by = ${revoke.by}, seal = ${revoke.sealed.seal} WHERE tenant = ${tenant} AND id = ${id} AND revoked_at IS NULL AND used_count = ${revoke.sealed.from.usedCount} AND used_total = ${revoke.sealed.from.usedTotal}`,
});
