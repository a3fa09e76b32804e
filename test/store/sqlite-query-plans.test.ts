import { afterEach, describe, expect, it } from 'vitest';
import { FINAL_STATUSES } from '../../src/store/index.js';
import { auditPageSql } from '../../src/store/sql-audit.js';
import { countProposalsSql } from '../../src/store/sql-counts.js';
import { GRANT_SQL } from '../../src/store/sql-grants.js';
import { ROUTING_SQL } from '../../src/store/sql-routing.js';
import type { SqlQuery } from '../../src/sql/sql.js';
import {
  countMatchingSql,
  listProposalsSql,
  pendingDueSql,
  SQLITE_PREVIEW_SQL,
} from '../../src/store/sql-proposals.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';

// SQLite plans without statistics (a store never runs ANALYZE), so they are the same on an empty
// database as on a large one: each of these reads what it returns, not the tenant's whole history.
// bench:scale measures the same paths at 10⁶ proposals.

let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function planOf(query: SqlQuery): Promise<string[]> {
  store = new SqliteStore({ path: ':memory:' });
  await store.migrate();
  const { text, values } = query.render('sqlite');
  return (store.database.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as { detail: string }[]).map(
    (r) => r.detail,
  );
}

describe('SQLite query plans of the inbox and the proposal page', () => {
  it('lists the first pending page from the status index, in index order', async () => {
    const plan = await planOf(listProposalsSql('acme', { status: 'pending', limit: 51 }, SQLITE_PREVIEW_SQL));
    expect(plan).toEqual([
      'SEARCH countersign_proposals USING INDEX countersign_proposals_by_status (tenant=? AND status=?)',
    ]);
  });

  it.each([
    ['runId', 'by_run (tenant=? AND run_id=?)'],
    ['requestedBy', 'by_requester (tenant=? AND requested_by=?)'],
  ] as const)(
    'lists the proposals of one %s from its index, in index order (never the tenant by creation)',
    async (filter, index) => {
      const plan = await planOf(listProposalsSql('acme', { [filter]: 'x', limit: 21 }, SQLITE_PREVIEW_SQL));
      expect(plan).toEqual([`SEARCH countersign_proposals USING INDEX countersign_proposals_${index}`]);
    },
  );

  it('counts the recent tab from (tenant, updated_at) of decided proposals and the executing ones by status, not by reading every proposal of the tenant', async () => {
    const plan = await planOf(
      countMatchingSql(
        'acme',
        { status: [...FINAL_STATUSES, 'executing'], updatedSince: 1_000 },
        SQLITE_PREVIEW_SQL,
      ),
    );
    expect(plan).toEqual([
      'SCAN CONSTANT ROW',
      'SCALAR SUBQUERY 1',
      'SEARCH countersign_proposals USING COVERING INDEX countersign_proposals_by_updated (tenant=? AND updated_at>?)',
      'SCALAR SUBQUERY 2',
      'SEARCH countersign_proposals USING INDEX countersign_proposals_by_status (tenant=? AND status=?)',
    ]);
  });

  it('lists the recent tab from the union of (tenant, updated_at) and the executing ones by status', async () => {
    const plan = await planOf(
      listProposalsSql(
        'acme',
        { status: [...FINAL_STATUSES, 'executing'], updatedSince: 1_000, limit: 51 },
        SQLITE_PREVIEW_SQL,
      ),
    );
    expect(plan).toEqual([
      'MULTI-INDEX OR',
      'INDEX 1',
      'SEARCH countersign_proposals USING INDEX countersign_proposals_by_updated (tenant=? AND updated_at>?)',
      'INDEX 2',
      'SEARCH countersign_proposals USING INDEX countersign_proposals_by_status (tenant=? AND status=?)',
      'USE TEMP B-TREE FOR ORDER BY',
    ]);
  });

  it('counts a status tab from an index alone', async () => {
    const plan = await planOf(countMatchingSql('acme', { status: 'pending' }, SQLITE_PREVIEW_SQL));
    expect(plan).toHaveLength(1);
    expect(plan[0]).toMatch(
      /^SEARCH countersign_proposals USING COVERING INDEX \S+ \(tenant=\? AND status=\?\)$/,
    );
  });

  it('counts a quota from tenant-first indexes and the per-second counters: never every pending proposal or the whole minute', async () => {
    for (const requestedBy of [undefined, 'agent:a']) {
      const query = { createdSince: 1_001, pendingAt: 60_000, atMost: 301 };
      const plan = await planOf(countProposalsSql('acme', requestedBy ? { ...query, requestedBy } : query));
      const who = requestedBy ? 'tenant=? AND requested_by=?' : 'tenant=?';
      const pending = requestedBy ? 'pending_by_requester' : 'pending_by_tenant';
      const created = requestedBy ? 'by_requester' : 'by_created';
      expect(plan.filter((line) => line.includes('countersign_'))).toEqual([
        `SEARCH countersign_proposals USING COVERING INDEX countersign_proposals_${pending} (${who} AND expires_at>?)`,
        'SEARCH countersign_proposal_rates USING PRIMARY KEY (tenant=? AND requested_by=? AND second>?)',
        `SEARCH countersign_proposals USING COVERING INDEX countersign_proposals_${created} (${who} AND created_at>? AND created_at<?)`,
        `SEARCH countersign_proposals USING COVERING INDEX countersign_proposals_${created} (${who} AND created_at>?)`,
      ]);
      expect(plan.filter((line) => /TEMP B-TREE/.test(line))).toEqual([]);
      await store?.close();
      store = undefined;
    }
  });

  it('bounds a quota from the pending index and the per-second counters alone (no proposal rows of the minute)', async () => {
    for (const requestedBy of [undefined, 'agent:a']) {
      const query = { createdSince: 1_001, pendingAt: 60_000, atMost: 301, upperBound: true };
      const plan = await planOf(countProposalsSql('acme', requestedBy ? { ...query, requestedBy } : query));
      const who = requestedBy ? 'tenant=? AND requested_by=?' : 'tenant=?';
      const pending = requestedBy ? 'pending_by_requester' : 'pending_by_tenant';
      expect(plan.filter((line) => line.includes('countersign_'))).toEqual([
        `SEARCH countersign_proposals USING COVERING INDEX countersign_proposals_${pending} (${who} AND expires_at>?)`,
        'SEARCH countersign_proposal_rates USING PRIMARY KEY (tenant=? AND requested_by=? AND second>?)',
      ]);
      await store?.close();
      store = undefined;
    }
  });

  it("reads one proposal's audit events through (tenant, proposal_id, seq), not the tenant's whole chain", async () => {
    const plan = await planOf(
      auditPageSql('acme', {
        proposalId: 'prp_a',
        afterSeq: 0,
        limit: 1000,
        exceptSteps: ['denied', 'replayed'],
      }),
    );
    expect(plan).toContain(
      'SEARCH countersign_audit_events USING COVERING INDEX countersign_audit_by_proposal (tenant=? AND proposal_id=? AND seq>?)',
    );
    // The primary key (tenant, seq) is an index of its own since the audit table keeps rowids (migration 24).
    expect(plan).toContain(
      'SEARCH countersign_audit_events USING INDEX sqlite_autoindex_countersign_audit_events_1 (tenant=? AND seq=?)',
    );
    expect(plan.filter((line) => /\bSCAN\b|TEMP B-TREE|\(tenant=\? AND seq>\?\)/.test(line))).toEqual([]);
  });
});

describe('SQLite query plans of grants', () => {
  it("reads a grant's audited approvals and revocation from indexes, never the tenant's audit", async () => {
    const plan = await planOf(GRANT_SQL.history('acme', 'grt_1'));
    expect(plan.filter((line) => /^(SCAN|SEARCH)/.test(line))).toEqual([
      'SEARCH g USING PRIMARY KEY (tenant=? AND id=?)',
      'SEARCH e USING COVERING INDEX countersign_audit_grant_approvals (tenant=? AND actor=?)',
      'SEARCH q USING COVERING INDEX countersign_audit_queue_grant_approvals (tenant=? AND actor=?)',
      'SEARCH e USING COVERING INDEX countersign_audit_grant_revocations (tenant=? AND proposal_id=?)',
      'SEARCH q USING COVERING INDEX countersign_audit_queue_grant_revocations (tenant=? AND proposal_id=?)',
    ]);
  });

  it("pages an agent's grants from the subject index", async () => {
    for (const query of [
      GRANT_SQL.listBySubject('acme', 'agent:a', 100),
      GRANT_SQL.listBySubjectBefore('acme', 'agent:a', { createdAt: 5, id: 'grt_5' }, 100),
    ]) {
      const plan = await planOf(query);
      expect(plan[0]).toMatch(
        /^SEARCH countersign_grants USING INDEX countersign_grants_by_subject \(tenant=\? AND subject=\?/,
      );
      await store?.close();
      store = undefined;
    }
  });

  it("pages a tenant's grants from the creation index, without sorting them all", async () => {
    for (const query of [
      GRANT_SQL.list('acme', 100),
      GRANT_SQL.listBefore('acme', { createdAt: 5, id: 'grt_5' }, 100),
    ]) {
      const plan = await planOf(query);
      expect(plan).toEqual([
        'SEARCH countersign_grants USING INDEX countersign_grants_by_created (tenant=?)',
      ]);
      await store?.close();
      store = undefined;
    }
  });
});

// The loose scan of the tenants with a pending proposal: the first by one seek, each next by one more.
const PENDING_TENANTS_PLAN = [
  'CO-ROUTINE pending_tenants',
  'SETUP',
  'SEARCH countersign_proposals USING COVERING INDEX countersign_proposals_pending_by_tenant',
  'RECURSIVE STEP',
  'SCAN t',
  'CORRELATED SCALAR SUBQUERY 2',
  'SEARCH p USING COVERING INDEX countersign_proposals_pending_by_tenant (tenant>?)',
];

describe('SQLite query plans of the sweeps', () => {
  it('the escalation sweep reads the routes not escalated yet from their partial index, then each proposal by key', async () => {
    const plan = await planOf(ROUTING_SQL.listEscalationDue(1_000, 200));
    expect(plan[0]).toBe('SEARCH r USING INDEX countersign_proposal_routes_escalation (escalate_at<?)');
    expect(plan[1]).toBe('SEARCH p USING INDEX sqlite_autoindex_countersign_proposals_1 (id=?)');
  });

  it('the reminder sweep reads each tenant with a pending proposal by one seek, then its proposals by expiry, and each reminder by key', async () => {
    const plan = await planOf(ROUTING_SQL.listReminderDue(1_000, 2_000, 200));
    expect(plan.slice(0, 7)).toEqual(PENDING_TENANTS_PLAN);
    expect(plan.slice(7)).toEqual([
      'SCAN t',
      'SEARCH p USING INDEX countersign_proposals_pending_by_tenant (tenant=? AND expires_at>? AND expires_at<?)',
      'CORRELATED SCALAR SUBQUERY 4',
      'SEARCH m USING PRIMARY KEY (tenant=? AND proposal_id=?)',
    ]);
  });

  it('the expiry sweep reads each tenant with a pending proposal by one seek, then its due proposals by expiry', async () => {
    const plan = await planOf(pendingDueSql({ until: 1_000, limit: 200 }));
    expect(plan.slice(0, 7)).toEqual(PENDING_TENANTS_PLAN);
    expect(plan.slice(7)).toEqual([
      'SCAN t',
      'SEARCH p USING INDEX countersign_proposals_pending_by_tenant (tenant=? AND expires_at<?)',
    ]);
  });
});
