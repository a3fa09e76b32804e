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
  ['seal', 'seal'],
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

// How each column of a column list converts: 0 as stored, 1 an integer, 2 a boolean. Computed
// once per list: rows are read and written on every lifecycle step.
const kindsOf = new WeakMap<readonly (readonly [string, string])[], Uint8Array>();
function kinds(columns: readonly (readonly [string, string])[]): Uint8Array {
  let known = kindsOf.get(columns);
  if (known === undefined) {
    known = Uint8Array.from(columns, ([field]) =>
      BOOLEAN_FIELDS.has(field) ? 2 : INTEGER_FIELDS.has(field) ? 1 : 0,
    );
    kindsOf.set(columns, known);
  }
  return known;
}

/** Builds a record from a row; integers come back as numbers even when the driver returns strings (pg bigint). */
export function fromRow<T>(columns: readonly (readonly [string, string])[], row: Record<string, unknown>): T {
  const kind = kinds(columns);
  const out: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) {
    const [field, column] = columns[i]!;
    const value = row[column];
    out[field] =
      kind[i] === 2
        ? value === true || value === 1 || value === '1'
        : value !== null && value !== undefined && kind[i] === 1
          ? Number(value)
          : (value ?? null);
  }
  return out as T;
}

/** The row values of a record, in column order. */
export function toRow(columns: readonly (readonly [string, string])[], record: object): unknown[] {
  const r = record as Record<string, unknown>;
  const kind = kinds(columns);
  const row = new Array<unknown>(columns.length);
  for (let i = 0; i < columns.length; i++) {
    const value = r[columns[i]![0]];
    row[i] = kind[i] === 2 ? (value === true ? 1 : 0) : (value ?? null);
  }
  return row;
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
