import type { ApprovalRecord, AttemptRecord, GrantRecord, ProposalRecord } from './records.js';

// One list maps record fields to SQL columns for every SQL backend, so the backends cannot drift.
/** Proposal record fields and their SQL columns, in insert order. */
export const PROPOSAL_COLUMNS = [
  ['tenant', 'tenant'],
  ['id', 'id'],
  ['formatVersion', 'format_version'],
  ['runId', 'run_id'],
  ['section', 'section'],
  ['resource', 'resource'],
  ['requestedBy', 'requested_by'],
  ['editedBy', 'edited_by'],
  ['policyJson', 'policy_json'],
  ['operation', 'operation'],
  ['scopeVersion', 'scope_version'],
  ['viewVersion', 'view_version'],
  ['requestJson', 'request_json'],
  ['argumentsJson', 'arguments_json'],
  ['scopeJson', 'scope_json'],
  ['scopeDigest', 'scope_digest'],
  ['previewJson', 'preview_json'],
  ['digest', 'digest'],
  ['seal', 'seal'],
  ['status', 'status'],
  ['createdAt', 'created_at'],
  ['expiresAt', 'expires_at'],
  ['supersedes', 'supersedes'],
  ['supersededBy', 'superseded_by'],
  ['decidedBy', 'decided_by'],
  ['decidedAt', 'decided_at'],
  ['approvalKind', 'approval_kind'],
  ['grantId', 'grant_id'],
  ['decisionNote', 'decision_note'],
  ['currentAttempt', 'current_attempt'],
  ['outcomeJson', 'outcome_json'],
  ['updatedAt', 'updated_at'],
] as const satisfies readonly (readonly [keyof ProposalRecord, string])[];

/** Attempt record fields and their SQL columns, in insert order. */
export const ATTEMPT_COLUMNS = [
  ['tenant', 'tenant'],
  ['id', 'id'],
  ['proposalId', 'proposal_id'],
  ['number', 'number'],
  ['idempotencyKey', 'idempotency_key'],
  ['status', 'status'],
  ['leaseUntil', 'lease_until'],
  ['commandId', 'command_id'],
  ['startedAt', 'started_at'],
  ['finishedAt', 'finished_at'],
] as const satisfies readonly (readonly [keyof AttemptRecord, string])[];

/** Grant record fields and their SQL columns, in insert order. */
export const GRANT_COLUMNS = [
  ['tenant', 'tenant'],
  ['id', 'id'],
  ['subject', 'subject'],
  ['operationsJson', 'operations_json'],
  ['resource', 'resource'],
  ['constraintsJson', 'constraints_json'],
  ['capField', 'cap_field'],
  ['capTotal', 'cap_total'],
  ['capUses', 'cap_uses'],
  ['usedCount', 'used_count'],
  ['usedTotal', 'used_total'],
  ['expiresAt', 'expires_at'],
  ['createdAt', 'created_at'],
  ['createdBy', 'created_by'],
  ['revokedAt', 'revoked_at'],
  ['revokedBy', 'revoked_by'],
  ['note', 'note'],
  ['satisfiesQuorum', 'satisfies_quorum'],
] as const satisfies readonly (readonly [keyof GrantRecord, string])[];

/** Approval (quorum) record fields and their SQL columns, in insert order. */
export const APPROVAL_COLUMNS = [
  ['tenant', 'tenant'],
  ['proposalId', 'proposal_id'],
  ['approver', 'approver'],
  ['digest', 'digest'],
  ['at', 'at'],
  ['seal', 'seal'],
] as const satisfies readonly (readonly [keyof ApprovalRecord, string])[];

const BOOLEAN_FIELDS = new Set(['satisfiesQuorum']);

const INTEGER_FIELDS = new Set([
  'capTotal',
  'capUses',
  'usedCount',
  'usedTotal',
  'revokedAt',
  'formatVersion',
  'scopeVersion',
  'viewVersion',
  'createdAt',
  'expiresAt',
  'decidedAt',
  'currentAttempt',
  'updatedAt',
  'number',
  'leaseUntil',
  'startedAt',
  'finishedAt',
  'seq',
  'at',
]);

/** Column name of a record field. */
export function columnOf(columns: readonly (readonly [string, string])[], field: string): string {
  const found = columns.find(([f]) => f === field);
  if (!found) throw new Error(`no column for field ${field}`);
  return found[1];
}

/** Builds a record from a row; integers come back as numbers even when the driver returns strings (pg bigint). */
export function fromRow<T>(columns: readonly (readonly [string, string])[], row: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [field, column] of columns) {
    const value = row[column];
    out[field] = BOOLEAN_FIELDS.has(field)
      ? value === true || value === 1 || value === '1'
      : value !== null && value !== undefined && INTEGER_FIELDS.has(field)
        ? Number(value)
        : (value ?? null);
  }
  return out as T;
}

/** The row values of a record, in column order. */
export function toRow(columns: readonly (readonly [string, string])[], record: object): unknown[] {
  const r = record as Record<string, unknown>;
  return columns.map(([field]) =>
    BOOLEAN_FIELDS.has(field) ? (r[field] === true ? 1 : 0) : (r[field] ?? null),
  );
}

/** Audit event fields and their SQL columns, in insert order (see `auditRow`). */
export const AUDIT_COLUMNS = [
  ['tenant', 'tenant'],
  ['seq', 'seq'],
  ['id', 'id'],
  ['proposalId', 'proposal_id'],
  ['attemptId', 'attempt_id'],
  ['runId', 'run_id'],
  ['step', 'step'],
  ['actor', 'actor'],
  ['reason', 'reason'],
  ['digestsJson', 'digests_json'],
  ['commandId', 'command_id'],
  ['detailJson', 'detail_json'],
  ['at', 'at'],
  ['leafHash', 'leaf_hash'],
  ['chainHash', 'chain_hash'],
  ['seal', 'seal'],
] as const;
