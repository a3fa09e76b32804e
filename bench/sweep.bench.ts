/**
 * What the expiry sweep's read costs with many tenants, now that it reads tenant by tenant
 * (`pendingDueSql`, migration 27) instead of from an index across tenants: a SQLite file holding
 * TENANTS tenants (default 1000) with 20 pending proposals each and nothing due, the sweep's read
 * timed 60 times (the median), then the same with the dropped index across tenants made again and
 * the old query read from it, for comparison.
 * Run: npm run bench:sweep  (TENANTS=10000 for more tenants)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingDueSql } from '../src/store/sql-proposals.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { printJsonResult } from './json-result.js';

const TENANTS = Number(process.env['TENANTS'] ?? 1000);
const PER_TENANT = 20;
const dir = mkdtempSync(join(tmpdir(), 'countersign-sweep-'));
const store = new SqliteStore({ path: join(dir, 'sweep.db') });
await store.migrate();
const db = store.database;
// Rows written directly (only the columns the sweep reads matter), expiring long after `until`.
db.exec(`INSERT INTO countersign_proposals (tenant, id, format_version, run_id, resource, requested_by, operation,
  scope_version, view_version, request_json, arguments_json, scope_json, scope_digest, preview_json, digest, status,
  created_at, expires_at, current_attempt, updated_at)
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${TENANTS * PER_TENANT})
SELECT 't' || printf('%06d', n % ${TENANTS}), printf('prp_%026d', n), 3, 'run', 'x', 'agent:a', 'op', 1, 1, '{}',
  '{}', '{}', lower(hex(randomblob(32))), '{}', 'd', 'pending', n, 10000000 + n, 0, n FROM g`);

function medianMs(read: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const t0 = process.hrtime.bigint();
    read();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return times.sort((a, b) => a - b)[30]!;
}

const { text, values } = pendingDueSql({ until: 5_000_000, limit: 100 }).render('sqlite');
const byTenant = db.prepare(text);
const tenantByTenant = medianMs(() => byTenant.all(...values));
db.exec(
  "CREATE INDEX bench_expiry_across_tenants ON countersign_proposals (expires_at) WHERE status = 'pending'",
);
const across = db.prepare(
  "SELECT tenant, id FROM countersign_proposals WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
);
const acrossTenants = medianMs(() => across.all(5_000_000, 100));
await store.close();
rmSync(dir, { recursive: true, force: true });

console.log(`expiry sweep read, SQLite: ${TENANTS} tenants × ${PER_TENANT} pending proposals, nothing due`);
console.log(`tenant by tenant (the store's): ${tenantByTenant.toFixed(3)} ms`);
console.log(`from an index across tenants (before migration 27): ${acrossTenants.toFixed(3)} ms`);
printJsonResult({ tenants: TENANTS, tenant_by_tenant_ms: tenantByTenant, across_tenants_ms: acrossTenants });
