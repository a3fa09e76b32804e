import type { AuditEvent, QueuedAuditEvent } from '../audit/event.js';
import { type SqlQuery, sql } from '../sql/sql.js';
import type { AuditQuery, QueuedAuditRow } from './store.js';
import { JsonParseError } from '../canonical/errors.js';
import { parseStoredJson } from '../canonical/stored-json.js';

// Shared by every SQL backend, like sql-columns.ts, so an audit event is stored the same way in each.

/** Row values of an audit event, in `AUDIT_COLUMNS` order. */
export function auditRow(e: AuditEvent): unknown[] {
  return [
    e.tenant,
    e.seq,
    e.id,
    e.proposalId,
    e.attemptId,
    e.runId,
    e.step,
    e.actor,
    e.reason,
    JSON.stringify(e.digests),
    e.commandId,
    JSON.stringify(e.detail),
    e.at,
    e.leafHash,
    e.chainHash,
    e.seal,
  ];
}

/** Columns of an audit event waiting to be chained (`countersign_audit_queue`, `n` set by the database). */
export const QUEUE_COLUMNS = [
  'tenant',
  'id',
  'proposal_id',
  'attempt_id',
  'run_id',
  'step',
  'actor',
  'reason',
  'digests_json',
  'command_id',
  'detail_json',
  'at',
  'seal',
] as const;

/** Row values of a queued audit event and its seal, in `QUEUE_COLUMNS` order. */
export function queueRow(e: QueuedAuditEvent, seal: string | null): unknown[] {
  return [
    e.tenant,
    e.id,
    e.proposalId,
    e.attemptId,
    e.runId,
    e.step,
    e.actor,
    e.reason,
    JSON.stringify(e.digests),
    e.commandId,
    JSON.stringify(e.detail),
    e.at,
    seal,
  ];
}

/** A queued audit event from its stored row (read like an event row, without sequence or hashes). */
export function queuedFromRow(row: Record<string, unknown>): QueuedAuditRow & { readonly n: number } {
  const {
    seq: _seq,
    leafHash: _leaf,
    chainHash: _chain,
    seal,
    ...event
  } = auditFromRow({
    ...row,
    seq: 0,
    leaf_hash: '',
    chain_hash: '',
  });
  return { n: Number(row['n']), event, seal };
}

/** An audit event from a stored row (JSON parts parsed strictly; integers accepted as numbers or strings). */
export function auditFromRow(row: Record<string, unknown>): AuditEvent {
  return {
    tenant: String(row['tenant']),
    seq: Number(row['seq']),
    id: String(row['id']),
    proposalId: String(row['proposal_id']),
    attemptId: (row['attempt_id'] as string | null) ?? null,
    runId: String(row['run_id']),
    step: row['step'] as AuditEvent['step'],
    actor: String(row['actor']),
    reason: (row['reason'] as string | null) ?? null,
    digests: readableJson(row['digests_json']) as AuditEvent['digests'],
    commandId: (row['command_id'] as string | null) ?? null,
    detail: readableJson(row['detail_json']) as AuditEvent['detail'],
    at: Number(row['at']),
    leafHash: String(row['leaf_hash']),
    chainHash: String(row['chain_hash']),
    seal: (row['seal'] as string | null) ?? null,
  };
}

// A row whose JSON was tampered into nonsense must still be read, so that verification names it
// (its leaf hash no longer matches) instead of failing to read the chain at all; and every reader
// expects an object, so valid JSON of another shape (`null`, `[]`, `7`) reads as unreadable too.
function readableJson(value: unknown): Record<string, unknown> {
  const text = String(value);
  try {
    const parsed = parseStoredJson(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { unreadable: text };
  } catch (error) {
    if (error instanceof JsonParseError) return { unreadable: text };
    throw error;
  }
}

/** The SELECT of one page of a tenant's audit events (see {@link AuditQuery}). */
export function auditPageSql(tenant: string, query: AuditQuery): SqlQuery {
  const where = [sql`tenant = ${tenant}`];
  if (query.proposalId === undefined) where.push(sql`seq > ${query.afterSeq ?? 0}`);
  else {
    // One proposal's events are found through (tenant, proposal_id, seq). Written as a plain
    // filter, SQLite (no statistics) walks the tenant's whole chain by (tenant, seq) instead,
    // reading every event of the tenant to open one proposal (bench:scale).
    where.push(
      sql`seq IN (SELECT seq FROM countersign_audit_events WHERE tenant = ${tenant} AND proposal_id = ${query.proposalId} AND seq > ${query.afterSeq ?? 0})`,
    );
  }
  if (query.steps !== undefined)
    where.push(query.steps.length === 0 ? sql.raw('1 = 0') : sql`step IN (${sql.list(query.steps)})`);
  if (query.exceptSteps !== undefined && query.exceptSteps.length > 0)
    where.push(sql`step NOT IN (${sql.list(query.exceptSteps)})`);
  return sql`SELECT * FROM countersign_audit_events WHERE ${sql.join(where, ' AND ')} ORDER BY seq LIMIT ${query.limit}`;
}
