import { GRANT_COLUMNS } from './sql-columns.js';

const columns = GRANT_COLUMNS.map(([, c]) => c);

/**
 * The grant statements every SQL backend runs, with `?` placeholders (the PostgreSQL store
 * numbers them). One text, so the cap check cannot differ between backends.
 */
export const GRANT_SQL = Object.freeze({
  insert: `INSERT INTO countersign_grants (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
  get: 'SELECT * FROM countersign_grants WHERE tenant = ? AND id = ?',
  list: 'SELECT * FROM countersign_grants WHERE tenant = ? ORDER BY created_at DESC, id DESC LIMIT ?',
  listBySubject:
    'SELECT * FROM countersign_grants WHERE tenant = ? AND subject = ? ORDER BY created_at DESC, id DESC LIMIT ?',
  // One compare-and-set: concurrent proposals can never spend past a cap.
  spend:
    'UPDATE countersign_grants SET used_count = used_count + 1, used_total = used_total + ? ' +
    'WHERE tenant = ? AND id = ? AND revoked_at IS NULL AND expires_at > ? ' +
    'AND (cap_uses IS NULL OR used_count + 1 <= cap_uses) AND (cap_total IS NULL OR used_total + ? <= cap_total)',
  spendParams: (
    tenant: string,
    id: string,
    spend: { readonly amount: number; readonly now: number },
  ): unknown[] => [spend.amount, tenant, id, spend.now, spend.amount],
  /** Records one quorum approval; a second by the same approver inserts nothing (0 changes). */
  insertApproval:
    'INSERT INTO countersign_approvals (tenant, proposal_id, approver, digest, at, seal) VALUES (?, ?, ?, ?, ?, ?) ' +
    'ON CONFLICT (tenant, proposal_id, approver) DO NOTHING',
  listApprovals:
    'SELECT * FROM countersign_approvals WHERE tenant = ? AND proposal_id = ? ORDER BY at, approver',
  revoke:
    'UPDATE countersign_grants SET revoked_at = ?, revoked_by = ? WHERE tenant = ? AND id = ? AND revoked_at IS NULL',
});
