import type { SqliteStore } from '../../src/store/sqlite/index.js';

/** The id of the event {@link forgeNextAuditEvent} inserts. */
export const FORGED_EVENT_ID = 'evt_forgednextplace000000000';

/**
 * What a database writer does to block a tenant's audit: copies the tenant's newest event, under a
 * new id, to the place its chain takes next (the head's seq + 1). Returns that seq.
 */
export function forgeNextAuditEvent(store: SqliteStore, tenant: string): number {
  const db = store.database;
  const head = db.prepare('SELECT seq FROM countersign_audit_heads WHERE tenant = ?').get(tenant) as
    | { seq: number }
    | undefined;
  if (!head) throw new Error(`forgeNextAuditEvent: ${tenant} has no audit chain yet`);
  const newest = db
    .prepare('SELECT * FROM countersign_audit_events WHERE tenant = ? AND seq = ?')
    .get(tenant, head.seq) as Record<string, unknown>;
  const seq = head.seq + 1;
  const columns = Object.keys(newest);
  db.prepare(
    `INSERT INTO countersign_audit_events (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
  ).run(...columns.map((c) => (c === 'id' ? FORGED_EVENT_ID : c === 'seq' ? seq : newest[c])));
  return seq;
}
