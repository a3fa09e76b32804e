import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, verifyAudit } from '../../src/index.js';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { SQLITE_PROPOSAL_COLUMNS_V24 } from '../../src/store/sql/migrations.js';
import { approver, proposePayment, tempDir } from '../support/engine.js';

interface Raw {
  exec(sql: string): unknown;
  prepare(sql: string): { all(...p: unknown[]): Record<string, unknown>[]; run(...p: unknown[]): unknown };
  close(): unknown;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Raw;

/** Runs `sql` on the database file at `path` outside the store. */
function onFile<T>(path: string, use: (raw: Raw) => T): T {
  const raw = new Database(path);
  try {
    return use(raw);
  } finally {
    raw.close();
  }
}

/** The audit table as versions 1–23 made it on SQLite: kept in key order (WITHOUT ROWID). */
function backToVersion23(path: string): void {
  onFile(path, (raw) =>
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
  `),
  );
}

/** The proposals table as versions 1–24 made it on SQLite: kept in key order (WITHOUT ROWID); 26 and 27 then run again. */
function backToVersion24(path: string): void {
  onFile(path, (raw) =>
    raw.exec(`
    CREATE TABLE proposals_v24 (
${SQLITE_PROPOSAL_COLUMNS_V24}
      PRIMARY KEY (tenant, id)
    ) WITHOUT ROWID;
    INSERT INTO proposals_v24 SELECT * FROM countersign_proposals;
    DROP TABLE countersign_proposals;
    ALTER TABLE proposals_v24 RENAME TO countersign_proposals;
    CREATE UNIQUE INDEX countersign_proposals_public_id ON countersign_proposals (id);
    CREATE INDEX countersign_proposals_by_status ON countersign_proposals (tenant, status, created_at, id);
    CREATE INDEX countersign_proposals_by_run ON countersign_proposals (tenant, run_id, created_at);
    CREATE INDEX countersign_proposals_by_requester ON countersign_proposals (tenant, requested_by, created_at);
    CREATE INDEX countersign_proposals_by_created ON countersign_proposals (tenant, created_at, id);
    CREATE INDEX countersign_proposals_by_status_updated ON countersign_proposals (tenant, status, updated_at);
    CREATE INDEX countersign_proposals_by_resource ON countersign_proposals (tenant, resource, operation, created_at, id);
    CREATE INDEX countersign_proposals_pending_by_scope ON countersign_proposals (tenant, scope_digest) WHERE status = 'pending';
    CREATE INDEX countersign_proposals_pending_by_requester ON countersign_proposals (tenant, requested_by, expires_at) WHERE status = 'pending';
    CREATE INDEX countersign_proposals_pending_by_tenant ON countersign_proposals (tenant, expires_at) WHERE status = 'pending';
    CREATE INDEX countersign_proposals_expiry ON countersign_proposals (expires_at) WHERE status = 'pending';
    DELETE FROM countersign_migrations WHERE version IN (25, 26, 27);
  `),
  );
}

function tableSql(path: string, table: string): string {
  return onFile(path, (raw) =>
    String(raw.prepare('SELECT sql FROM sqlite_schema WHERE name = ?').all(table)[0]?.['sql']),
  );
}

function rows(path: string, table: string, order: string): Record<string, unknown>[] {
  return onFile(path, (raw) => raw.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).all());
}

function events(path: string): Record<string, unknown>[] {
  return rows(path, 'countersign_audit_events', 'tenant, seq');
}

describe('migrations 24 and 25: SQLite audit events and proposals in ordinary tables', () => {
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
    expect(tableSql(path, 'countersign_audit_events')).not.toMatch(/WITHOUT ROWID/i);

    backToVersion23(path);
    expect(tableSql(path, 'countersign_audit_events')).toMatch(/WITHOUT ROWID/i);
    const before = events(path);
    expect(before.length).toBeGreaterThanOrEqual(12);

    const { engine: second, store } = await engineAt(path);
    try {
      expect(tableSql(path, 'countersign_audit_events')).not.toMatch(/WITHOUT ROWID/i);
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

  it('moves every proposal unchanged with its indexes, and a pending one is still approved and paid', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const path = join(dir, 'proposals.db');
    const { engine: first } = await engineAt(path);
    const paid = await proposePayment(first, 'acme', 'inv-104', 'run-paid');
    const done = await first.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: paid.id,
      approver: approver('acme'),
      seenDigest: paid.digest,
    });
    expect(done.kind).toBe('completed');
    const waiting = await proposePayment(first, 'globex', 'inv-201', 'run-waiting');
    await first.close();
    const indexes = (p: string) =>
      onFile(p, (raw) =>
        raw
          .prepare(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'countersign_proposals' AND sql IS NOT NULL ORDER BY name",
          )
          .all(),
      );
    const migratedIndexes = indexes(path);
    expect(migratedIndexes).toHaveLength(9);
    expect(tableSql(path, 'countersign_proposals')).not.toMatch(/WITHOUT ROWID/i);

    backToVersion24(path);
    expect(tableSql(path, 'countersign_proposals')).toMatch(/WITHOUT ROWID/i);
    const before = rows(path, 'countersign_proposals', 'tenant, id');
    expect(before.map((r) => r['status'])).toEqual(['succeeded', 'pending']);

    const { engine: second } = await engineAt(path);
    try {
      expect(tableSql(path, 'countersign_proposals')).not.toMatch(/WITHOUT ROWID/i);
      expect(rows(path, 'countersign_proposals', 'tenant, id')).toEqual(before);
      expect(indexes(path)).toEqual(migratedIndexes);
      const listed = await second.proposals.list('globex', { status: 'pending' });
      expect(listed.items.map((p) => p.id)).toEqual([waiting.id]);
      const later = await second.proposals.approveAndExecute({
        tenant: 'globex',
        proposalId: waiting.id,
        approver: approver('globex'),
        seenDigest: waiting.digest,
      });
      expect(later.kind === 'completed' && later.outcome.kind).toBe('succeeded');
    } finally {
      await second.close();
    }
  });

  it('a rebuild that fails midway rolls back whole: nothing is lost, and the next start applies it', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const path = join(dir, 'interrupted.db');
    const { engine: first } = await engineAt(path);
    const waiting = await proposePayment(first, 'acme', 'inv-104', 'run-waiting');
    await first.close();
    backToVersion24(path);
    const before = rows(path, 'countersign_proposals', 'tenant, id');
    // A table in the way of version 25's copy: its CREATE TABLE fails after 24's state is read.
    onFile(path, (raw) => raw.exec('CREATE TABLE countersign_proposals_v25 (x INTEGER)'));

    const blocked = new SqliteStore({ path });
    await expect(blocked.migrate()).rejects.toThrow(/countersign_proposals_v25 already exists/);
    await blocked.close();
    const versions = onFile(path, (raw) =>
      raw.prepare('SELECT version FROM countersign_migrations ORDER BY version DESC LIMIT 1').all(),
    );
    expect(versions).toEqual([{ version: 24 }]);
    expect(tableSql(path, 'countersign_proposals')).toMatch(/WITHOUT ROWID/i);
    expect(rows(path, 'countersign_proposals', 'tenant, id')).toEqual(before);

    onFile(path, (raw) => raw.exec('DROP TABLE countersign_proposals_v25'));
    const { engine: second } = await engineAt(path);
    try {
      expect(tableSql(path, 'countersign_proposals')).not.toMatch(/WITHOUT ROWID/i);
      expect(rows(path, 'countersign_proposals', 'tenant, id')).toEqual(before);
      const paid = await second.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: waiting.id,
        approver: approver('acme'),
        seenDigest: waiting.digest,
      });
      expect(paid.kind === 'completed' && paid.outcome.kind).toBe('succeeded');
    } finally {
      await second.close();
    }
  });
});
