/**
 * PostgreSQL claim benchmark. Run with `npm run bench:postgres` (a server at
 * COUNTERSIGN_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test).
 *
 * For 1, 4 and 8 connections it measures claims per second, in one process against one server:
 * - engine: `engine.approve` on pending `invoice.pay` proposals, one tenant: the whole claim
 *   (tenant-scoped read, authorization, digest and scope recomputation, the conditional UPDATE,
 *   the attempt row, two audit events, chained inline or queued for a chaining pass) in one
 *   transaction;
 * - engine, 8 tenants: the same with the proposals spread over 8 tenants, so the per-tenant audit
 *   chain is not the one lock every claim waits for;
 * - raw floor: one autocommit `UPDATE … WHERE status = 'pending' RETURNING id` per claim on rows of
 *   the same table (same indexes), through a `pg` pool of the same size.
 * Each variant runs with as many concurrent callers as connections. Rounds alternate the order of
 * the variants; each round claims freshly reset rows; the median round is reported.
 *
 * Options (environment): BENCH_CLAIMS claims per variant and round (default 1000), BENCH_ROUNDS (5),
 * BENCH_RTT_MS (default 0): a network round trip added to every statement of the engine and of
 * the floor alike, as to a server on another host; on loopback a claim is bound by this machine's
 * CPU, which hides what waits on commits and locks.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { type DemoWorld, demoOperations, demoWorld } from '../src/demo/demo-world.js';
import { type Actor, createEngine, type Engine } from '../src/index.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { printJsonResult } from './json-result.js';
import { describeStoreTarget } from '../src/store/open-store.js';
import { PostgresStore } from '../src/store/postgres/index.js';

const URL_ = process.env['COUNTERSIGN_TEST_PG_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
const CLAIMS = Number(process.env['BENCH_CLAIMS'] ?? 1000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const RTT_MS = Number(process.env['BENCH_RTT_MS'] ?? 0);
const POOL_SIZES = [1, 4, 8] as const;

const delay = () => new Promise<void>((resolve) => setTimeout(resolve, RTT_MS));

/** A `pg.Pool` whose every statement (on pooled clients too) first waits one round trip. */
function distant(pool: pg.Pool): pg.Pool {
  if (RTT_MS <= 0) return pool;
  const slow = <C extends { query: (...args: never[]) => unknown }>(client: C): C =>
    new Proxy(client, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (key !== 'query' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await delay();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return new Proxy(pool, {
    get(target, key, receiver) {
      if (key === 'connect') return async () => slow(await target.connect());
      if (key === 'query') return slow(target).query;
      return Reflect.get(target, key, receiver);
    },
  });
}
const TENANTS = 8;

type Variant = 'engine' | 'engine8' | 'raw';

const approverOf = (tenant: string): Actor => ({
  id: `user:bench@${tenant}.test`,
  tenant,
  kind: 'operator',
  roles: ['approver'],
});

/** Runs `work` over `items` with `concurrency` callers; returns the elapsed ms. */
async function timed<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= items.length) return;
        await work(items[i]!);
      }
    }),
  );
  return performance.now() - start;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function worldFor(tenants: readonly string[]): DemoWorld {
  const world = demoWorld();
  for (const tenant of tenants) {
    if (world.invoices.find(tenant, 'inv-104')) continue;
    world.invoices.add({
      tenant,
      id: 'inv-104',
      supplierName: 'Northwind Paper Co.',
      supplierAccount: 'acct-supplier-7',
      dueMinor: 24_049,
      currency: 'USD',
      status: 'open',
    });
  }
  return world;
}

async function propose(
  engine: Engine,
  tenants: readonly string[],
  count: number,
  concurrency: number,
): Promise<{ tenant: string; id: string; digest: string }[]> {
  const out: { tenant: string; id: string; digest: string }[] = [];
  await timed(
    Array.from({ length: count }, (_, i) => tenants[i % tenants.length]!),
    concurrency,
    async (tenant) => {
      const r = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-104' },
        tenant,
        resource: 'invoice:inv-104',
        requestedBy: `agent:${tenant}-assistant`,
        runId: 'run-bench',
      });
      if (r.kind !== 'proposed') throw new Error(`propose failed: ${r.kind}`);
      out.push({ tenant, id: r.proposal.id, digest: r.proposal.digest });
    },
  );
  return out;
}

async function measure(poolSize: number): Promise<Record<Variant, number>> {
  const schema = `cs_bench_${randomBytes(5).toString('hex')}`;
  const tenants8 = Array.from({ length: TENANTS }, (_, i) => `bench-t${i}`);
  const world = worldFor(['acme', ...tenants8]);
  const admin = new pg.Client({ connectionString: URL_ });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const storePool = new pg.Pool({
    connectionString: URL_,
    options: `-c search_path=${schema}`,
    max: poolSize,
  });
  const store = new PostgresStore({ pool: distant(storePool) });
  const engine = await createEngine({ store, operations: demoOperations(world), limits: BENCH_LIMITS });
  const rawPool = new pg.Pool({ connectionString: URL_, options: `-c search_path=${schema}`, max: poolSize });
  const raw = distant(rawPool);
  try {
    const one = await propose(engine, ['acme'], CLAIMS, 8);
    const spread = await propose(engine, tenants8, CLAIMS, 8);
    // The floor's rows: copies of the engine's rows (same table, same indexes, other ids).
    await raw.query(
      `INSERT INTO countersign_proposals SELECT tenant, id || '_raw', format_version, run_id, section, resource, requested_by, operation,
        scope_version, view_version, request_json, arguments_json, scope_json, scope_digest, preview_json, digest, seal, status,
        created_at, expires_at, supersedes, superseded_by, decided_by, decided_at, approval_kind, grant_id, decision_note,
        current_attempt, outcome_json, updated_at FROM countersign_proposals WHERE tenant = 'acme'`,
    );
    const rawIds = one.map((p) => `${p.id}_raw`);
    const runs: Record<Variant, () => Promise<number>> = {
      engine: () =>
        timed(one, poolSize, async (p) => {
          const r = await engine.proposals.approve({
            tenant: p.tenant,
            proposalId: p.id,
            approver: approverOf(p.tenant),
            seenDigest: p.digest,
          });
          if (r.kind !== 'claimed') throw new Error(`engine claim failed: ${r.kind}`);
        }),
      engine8: () =>
        timed(spread, poolSize, async (p) => {
          const r = await engine.proposals.approve({
            tenant: p.tenant,
            proposalId: p.id,
            approver: approverOf(p.tenant),
            seenDigest: p.digest,
          });
          if (r.kind !== 'claimed') throw new Error(`engine claim failed: ${r.kind}`);
        }),
      raw: () =>
        timed(rawIds, poolSize, async (id) => {
          const now = Date.now();
          const r = await raw.query(
            "UPDATE countersign_proposals SET status = 'executing', current_attempt = current_attempt + 1, decided_by = $3, decided_at = $4, approval_kind = 'exact', updated_at = $4 WHERE tenant = $1 AND id = $2 AND status = 'pending' RETURNING id",
            ['acme', id, 'user:bench@acme.test', now],
          );
          if (r.rows.length !== 1) throw new Error('raw claim failed');
        }),
    };
    const times: Record<Variant, number[]> = { engine: [], engine8: [], raw: [] };
    const order: Variant[] = ['engine', 'engine8', 'raw'];
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of round % 2 === 0 ? order : [...order].reverse())
        times[variant].push(await runs[variant]());
      const claimed = await raw.query(
        "SELECT count(*) AS n FROM countersign_proposals WHERE status = 'executing'",
      );
      const attempts = await raw.query('SELECT count(*) AS n FROM countersign_attempts');
      if (Number(claimed.rows[0]!['n']) !== 3 * CLAIMS || Number(attempts.rows[0]!['n']) !== 2 * CLAIMS) {
        throw new Error('a claim was lost or doubled');
      }
      await raw.query(
        "UPDATE countersign_proposals SET status = 'pending', current_attempt = 0, decided_by = NULL, decided_at = NULL, approval_kind = NULL",
      );
      await raw.query('DELETE FROM countersign_attempts');
      await raw.query('VACUUM ANALYZE countersign_proposals, countersign_attempts, countersign_audit_heads');
    }
    return {
      engine: (CLAIMS * 1000) / median(times.engine),
      engine8: (CLAIMS * 1000) / median(times.engine8),
      raw: (CLAIMS * 1000) / median(times.raw),
    };
  } finally {
    await engine.close();
    await storePool.end();
    await rawPool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await rawPool.end();
  }
}

const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US')}/s`;

async function main(): Promise<void> {
  const probe = new pg.Client({ connectionString: URL_ });
  await probe.connect();
  const version = String((await probe.query('SHOW server_version')).rows[0]!['server_version']);
  await probe.end();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `PostgreSQL ${version} at ${describeStoreTarget(URL_)}; ${cpus().length} CPUs (load average ${load} at start); Node ${process.version}`,
  );
  console.log(
    `${CLAIMS} claims per variant and round, median of ${ROUNDS} rounds${RTT_MS > 0 ? `, ${RTT_MS} ms added to every statement's round trip` : ''}\n`,
  );
  const rows: string[][] = [
    [
      'connections',
      'engine.approve (1 tenant)',
      `engine.approve (${TENANTS} tenants)`,
      'raw UPDATE … RETURNING',
      'engine / raw',
      `engine ${TENANTS}t / raw`,
    ],
  ];
  const oneTenant: Record<string, number> = {};
  const eightTenants: Record<string, number> = {};
  for (const size of POOL_SIZES) {
    const r = await measure(size);
    oneTenant[String(size)] = r.engine;
    eightTenants[String(size)] = r.engine8;
    rows.push([
      String(size),
      fmt(r.engine),
      fmt(r.engine8),
      fmt(r.raw),
      `${(r.engine / r.raw).toFixed(3)}×`,
      `${(r.engine8 / r.raw).toFixed(3)}×`,
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  console.log(line(rows[0]!));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows.slice(1)) console.log(line(row));
  printJsonResult({ one_tenant: oneTenant, eight_tenants: eightTenants });
}

await main();
