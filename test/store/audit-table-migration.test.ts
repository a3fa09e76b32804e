import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, verifyAudit } from '../../src/index.js';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { approver, proposePayment, tempDir } from '../support/engine.js';

interface Raw {
  exec(sql: string): unknown;
  prepare(sql: string): { all(...p: unknown[]): Record<string, unknown>[]; run(...p: unknown[]): unknown };
  close(): unknown;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Raw;

/** The audit table as versions 1–23 made it on SQLite: kept in key order (WITHOUT ROWID). */
function backToVersion23(path: string): void {
  const raw = new Database(path);
  raw.exec(`
    CREATE TABLE audit_v23 (
      tenant TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, proposal_id TEXT NOT NULL,
      attempt_id TEXT, run_id TEXT NOT NULL, step TEXT NOT NULL, actor TEXT NOT NULL, reason TEXT,
      digests_json TEXT NOT NULL, command_id TEXT, detail_json TEXT NOT NULL, at INTEGER NOT NULL,
      leaf_hash TEXT NOT NULL, chain_hash TEXT NOT NULL, seal TEXT,
      PRIMARY KEY (tenant, seq)
    ) WITHOUT ROWID;
    INSERT INTO audit_v23 SELECT * FROM countersign_audit_events;
    DROP TABLE countersign_audit_events;
    ALTER TABLE audit_v23 RENAME TO countersign_audit_events;
    CREATE INDEX countersign_audit_by_proposal ON countersign_audit_events (tenant, proposal_id, seq);
    CREATE UNIQUE INDEX countersign_audit_events_id ON countersign_audit_events (tenant, id);
    CREATE INDEX countersign_audit_grant_approvals ON countersign_audit_events (tenant, actor) WHERE reason = 'approved_by_grant';
    CREATE INDEX countersign_audit_grant_revocations ON countersign_audit_events (tenant, proposal_id) WHERE step = 'revoked' AND reason = 'grant_revoked';
    DELETE FROM countersign_migrations WHERE version = 24;
  `);
  raw.close();
}

function tableSql(path: string): string {
  const raw = new Database(path);
  const [row] = raw.prepare("SELECT sql FROM sqlite_schema WHERE name = 'countersign_audit_events'").all();
  raw.close();
  return String(row?.['sql']);
}

function events(path: string): Record<string, unknown>[] {
  const raw = new Database(path);
  const rows = raw.prepare('SELECT * FROM countersign_audit_events ORDER BY tenant, seq').all();
  raw.close();
  return rows;
}

describe('migration 24: SQLite audit events in an ordinary table', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  async function engineAt(path: string) {
    const store = new SqliteStore({ path });
    const engine = await createEngine({ store, operations: demoOperations(demoWorld()) });
    return { engine, store };
  }

  it('moves every event unchanged, the chain still verifies, and new events chain on', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const path = join(dir, 'audit.db');
    const { engine: first } = await engineAt(path);
    for (const [tenant, invoice] of [
      ['acme', 'inv-104'],
      ['globex', 'inv-201'],
    ] as const) {
      const p = await proposePayment(first, tenant, invoice, `run-${tenant}`);
      const done = await first.proposals.approveAndExecute({
        tenant,
        proposalId: p.id,
        approver: approver(tenant),
        seenDigest: p.digest,
      });
      expect(done.kind).toBe('completed');
    }
    await first.close();
    expect(tableSql(path)).not.toMatch(/WITHOUT ROWID/i);

    backToVersion23(path);
    expect(tableSql(path)).toMatch(/WITHOUT ROWID/i);
    const before = events(path);
    expect(before.length).toBeGreaterThanOrEqual(12);

    const { engine: second, store } = await engineAt(path);
    try {
      expect(tableSql(path)).not.toMatch(/WITHOUT ROWID/i);
      expect(events(path)).toEqual(before);
      expect(await verifyAudit(store)).toEqual({ kind: 'intact', tenants: 2, events: before.length });
      await proposePayment(second, 'acme', 'inv-105', 'run-after');
      expect(await verifyAudit(store)).toEqual({
        kind: 'intact',
        tenants: 2,
        events: before.length + 1,
      });
    } finally {
      await second.close();
    }
  });
});
