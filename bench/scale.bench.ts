/**
 * Scale: what one operator's inbox costs as the store grows. Run with `npm run bench:scale`
 * (PostgreSQL at COUNTERSIGN_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test; the
 * SQLite file goes to a temporary directory).
 *
 * For each store and size it grows a database of its own to 10³, 10⁴, 10⁵ or 10⁶ stored proposals
 * over 10 tenants (most decided, each with its audit events; see bench/scale-seed.ts), then
 * measures all of them in interleaved rounds (the order reversed every other round, after one
 * warm-up round), so a change of machine load during the run weighs on every size alike. In the
 * tenant `acme`:
 * - list: `engine.list` of the first pending page (50, newest first), as the inbox shows it;
 * - tab counts: the inbox's counts of the pending, needs-reconciliation and recent tabs and the
 *   shown tab's total, run together as the inbox runs them. These are exact counts: each costs
 *   the index entries it matches (bounded here by traffic, not history);
 * - all decided: an exact count of every decided proposal of the tenant, which no page shows: it
 *   grows with the tenant's history (O(n) index entries), shown so that cost is not hidden;
 * - open: `engine.get` and `engine.timeline` of one proposal, as its console page reads them;
 * - approve: `engine.approve` of one pending proposal (the atomic claim, audited).
 * A few proposals per size are real ones made through the engine (a first page of pending ones,
 * the one opened, the ones approved: each approval verifies the stored contract); the rest are
 * bulk copies of a real row
 * with new ids, tenants, statuses and times, inserted by one `INSERT … SELECT` per batch.
 *
 * Options: `--sizes 1000,10000` (default all four), `--stores sqlite` (default sqlite,postgres),
 * `--plans` (print the query plan of every statement the measured paths ran, at the largest
 * size), `--json` (last line: list ms per store and size, and the other figures under their own
 * keys). Environment: BENCH_ITERATIONS (timed runs of each read over all rounds, default 200),
 * BENCH_APPROVALS (60), BENCH_ROUNDS (5).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type DemoWorld, demoOperations, demoWorld } from '../src/demo/demo-world.js';
import { type Actor, createEngine, type Engine, type ProposalStatus } from '../src/index.js';
import { FINAL_STATUSES } from '../src/store/index.js';
import { describeStoreTarget } from '../src/store/open-store.js';
import { PostgresStore } from '../src/store/postgres/index.js';
import type { PgPool } from '../src/store/postgres/pg-driver.js';
import type { SqliteDatabase } from '../src/store/sqlite/sqlite-store.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import type { Store } from '../src/store/store.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { printJsonResult } from './json-result.js';
import {
  hasPlan,
  postgresScans,
  type RecordedStatement,
  recordingPool,
  recordingSqlite,
  sqliteScans,
  StatementLog,
} from './scale-plans.js';
import {
  bulkAuditSql,
  bulkProposalsSql,
  MEASURED_TENANT,
  postgresBulk,
  type SeedTemplates,
  sqliteBulk,
  TENANTS,
} from './scale-seed.js';

const PG_URL = process.env['COUNTERSIGN_TEST_PG_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
const ITERATIONS = Number(process.env['BENCH_ITERATIONS'] ?? 200);
const APPROVALS = Number(process.env['BENCH_APPROVALS'] ?? 60);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const PAGE = 50;
// The inbox's recent tab: decided (or executing) proposals changed in the last day.
const RECENT: readonly ProposalStatus[] = [...FINAL_STATUSES, 'executing'];
const DAY_MS = 24 * 60 * 60_000;

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function sizesOption(): number[] {
  const text = option('--sizes');
  if (text === undefined) return [1_000, 10_000, 100_000, 1_000_000];
  const sizes = text.split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isSafeInteger(n) || n < 100)) {
    throw new Error(`--sizes takes whole numbers of at least 100, comma-separated: got ${text}`);
  }
  return [...new Set(sizes)].sort((a, b) => a - b);
}

function storesOption(): ('sqlite' | 'postgres')[] {
  const names = (option('--stores') ?? 'sqlite,postgres').split(',').map((s) => s.trim());
  for (const name of names) {
    if (name !== 'sqlite' && name !== 'postgres') throw new Error(`--stores: unknown store ${name}`);
  }
  return names as ('sqlite' | 'postgres')[];
}

/** What differs per backend: bulk inserts, upkeep after a bulk load, plans, size on disk. */
interface Backend {
  readonly name: 'sqlite' | 'postgres';
  readonly store: Store;
  readonly log: StatementLog;
  /** Inserts bulk proposals [from, to) and their audit events in one transaction. */
  bulkCopy(from: number, to: number): Promise<void>;
  /** What a deployment's own upkeep would have done after a bulk load. */
  settle(): Promise<void>;
  plan(statement: RecordedStatement): Promise<string[]>;
  scans(plan: readonly string[]): string[];
  bytes(): Promise<number>;
  /** Names the rows the bulk copies come from, once the engine has written them. */
  useTemplates(templates: SeedTemplates, newestAt: number): void;
  close(): Promise<void>;
}

async function sqliteBackend(path: string): Promise<Backend> {
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => SqliteDatabase;
  const db = new Database(path);
  const log = new StatementLog();
  // PAGE_SIZE=n: the database made with n-byte pages instead of the store's default (for comparison).
  const store = new SqliteStore({
    database: recordingSqlite(db, log),
    ...(process.env['PAGE_SIZE'] ? { pageSize: Number(process.env['PAGE_SIZE']) } : {}),
  });
  let copies: { run(...params: unknown[]): unknown }[] | undefined;
  let templates: SeedTemplates | undefined;
  let newestAt = 0;
  return {
    name: 'sqlite',
    store,
    log,
    async bulkCopy(from, to) {
      copies ??= [bulkProposalsSql, bulkAuditSql].map((sql) =>
        db.prepare(sqliteBulk((source) => sql(source, templates!, newestAt))),
      );
      db.exec('BEGIN IMMEDIATE');
      try {
        for (const copy of copies) copy.run(from, to);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
    async settle() {
      // The WAL grew by the bulk load; a checkpoint folds it into the file as the next writers would.
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    async plan({ sql, params }) {
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map(
        (r) => r.detail,
      );
    },
    scans: sqliteScans,
    async bytes() {
      return statSync(path).size;
    },
    async close() {
      await store.close();
      db.close();
    },
    useTemplates(t, at) {
      templates = t;
      newestAt = at;
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  const schema = `cs_scale_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pool = new pg.Pool({ connectionString: PG_URL, options: `-c search_path=${schema}`, max: 10 });
  const log = new StatementLog();
  const store = new PostgresStore({ pool: recordingPool(pool as unknown as PgPool, log) });
  let templates: SeedTemplates | undefined;
  let newestAt = 0;
  return {
    name: 'postgres',
    store,
    log,
    async bulkCopy(from, to) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        for (const sql of [bulkProposalsSql, bulkAuditSql])
          await client.query(
            postgresBulk((source) => sql(source, templates!, newestAt)),
            [from, to],
          );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    async settle() {
      // Autovacuum would get there after a bulk load; the benchmark does not wait for it.
      await pool.query('VACUUM ANALYZE countersign_proposals, countersign_audit_events');
    },
    async plan({ sql, params }) {
      const { rows } = await pool.query(`EXPLAIN ${sql}`, [...params]);
      return rows.map((r: Record<string, string>) => String(r['QUERY PLAN']));
    },
    scans: postgresScans,
    async bytes() {
      const { rows } = await pool.query(
        "SELECT pg_total_relation_size('countersign_proposals') + pg_total_relation_size('countersign_audit_events') AS n",
      );
      return Number(rows[0]['n']);
    },
    async close() {
      await store.close();
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      await admin.end();
    },
    useTemplates(t, at) {
      templates = t;
      newestAt = at;
    },
  };
}

const approver: Actor = {
  id: 'user:bench@acme.test',
  tenant: MEASURED_TENANT,
  kind: 'operator',
  roles: ['approver'],
};

function worldWithTemplateInvoice(): DemoWorld {
  const world = demoWorld();
  // A second invoice that the succeeded template pays, so inv-104 stays open for every proposal.
  world.invoices.add({
    tenant: MEASURED_TENANT,
    id: 'inv-900',
    supplierName: 'Northwind Paper Co.',
    supplierAccount: 'acct-supplier-7',
    dueMinor: 24_049,
    currency: 'USD',
    status: 'open',
  });
  return world;
}

async function proposeReal(engine: Engine, invoice = 'inv-104'): Promise<{ id: string; digest: string }> {
  const r = await engine.proposals.propose({
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    tenant: MEASURED_TENANT,
    resource: `invoice:${invoice}`,
    requestedBy: 'agent:acme-assistant',
    runId: 'run-scale',
  });
  if (r.kind !== 'proposed') throw new Error(`propose failed: ${r.kind}`);
  return { id: r.proposal.id, digest: r.proposal.digest };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const count = (n: number) => n.toLocaleString('en-US');

/** Inserts bulk rows [from, to) in batches of about 5 % of the stage, reporting each on stderr. */
async function seed(backend: Backend, from: number, to: number, size: number): Promise<void> {
  const rows = to - from;
  if (rows <= 0) return;
  const batch = Math.max(1_000, Math.ceil(rows / 20));
  const t0 = performance.now();
  for (let at = from; at < to; at += batch) {
    const end = Math.min(at + batch, to);
    await backend.bulkCopy(at, end);
    const done = end - from;
    const seconds = (performance.now() - t0) / 1000;
    process.stderr.write(
      `${backend.name}: seeding to ${count(size)}: ${count(done)} / ${count(rows)} proposals (${Math.round((done / rows) * 100)}%), ${count(Math.round(done / seconds))} proposals/s with their audit events\n`,
    );
  }
}

interface SizeFigures {
  readonly list: number;
  readonly counts: number;
  readonly decided: number;
  readonly open: number;
  readonly approve: number;
  readonly matched: { pending: number; reconcile: number; recent: number; decided: number };
  readonly seedSeconds: number;
  readonly bytes: number;
}

/** One database grown to one size, with its engine and the real proposals left to open and approve. */
interface Instance {
  readonly size: number;
  readonly backend: Backend;
  readonly engine: Engine;
  readonly opened: string;
  readonly toApprove: { id: string; digest: string }[];
  readonly seedSeconds: number;
}

type Samples = Record<'list' | 'counts' | 'decided' | 'open' | 'approve', number[]>;

const inbox = { status: 'pending' as const };
const recentTab = () => ({ status: RECENT, updatedSince: Date.now() - DAY_MS });

/** The inbox's four counts, run together as the inbox runs them. */
const tabCounts = (engine: Engine) =>
  Promise.all([
    engine.proposals.count(MEASURED_TENANT, inbox),
    engine.proposals.count(MEASURED_TENANT, { status: 'needs_reconciliation' }),
    engine.proposals.count(MEASURED_TENANT, recentTab()),
    engine.proposals.count(MEASURED_TENANT, inbox),
  ]);

/** Grows one database to `size` proposals: templates, bulk copies, then the real proposals to measure on. */
async function prepare(backend: Backend, size: number, approvals: number): Promise<Instance> {
  const engine = await createEngine({
    store: backend.store,
    operations: demoOperations(worldWithTemplateInvoice()),
    limits: BENCH_LIMITS,
  });
  // The templates: a real pending proposal and a real one that ran.
  const pending = await proposeReal(engine);
  const paid = await proposeReal(engine, 'inv-900');
  const ran = await engine.proposals.approveAndExecute({
    tenant: MEASURED_TENANT,
    proposalId: paid.id,
    approver,
    seenDigest: paid.digest,
  });
  if (ran.kind !== 'completed' || ran.outcome.kind !== 'succeeded') throw new Error('template run failed');
  backend.useTemplates({ pendingId: pending.id, succeededId: paid.id }, Date.now() - 60_000);
  // The real proposals come after the bulk rows: they are the newest, as live ones are. A page of
  // them stays pending, so every size lists a full first page whatever the approvals took.
  const fresh = PAGE + approvals;
  const t0 = performance.now();
  await seed(backend, 0, size - 2 - fresh, size);
  await backend.settle();
  const seedSeconds = (performance.now() - t0) / 1000;
  const made: { id: string; digest: string }[] = [];
  for (let i = 0; i < fresh; i++) made.push(await proposeReal(engine));
  return { size, backend, engine, opened: made[0]!.id, toApprove: made.slice(PAGE), seedSeconds };
}

/** One round on one database: `runs` timed runs of each read, `approvals` timed approvals. */
async function measureRound(at: Instance, samples: Samples, runs: number, approvals: number): Promise<void> {
  const { engine } = at;
  const time = async (into: number[], times: number, fn: () => Promise<unknown>) => {
    await fn(); // untimed: the first run after another database's round
    for (let i = 0; i < times; i++) {
      const t0 = performance.now();
      await fn();
      into.push(performance.now() - t0);
    }
  };
  await time(samples.list, runs, async () => {
    const page = await engine.proposals.list(MEASURED_TENANT, { ...inbox, limit: PAGE });
    if (page.items.length !== PAGE || page.items.some((p) => p.status !== 'pending'))
      throw new Error(`the first pending page has ${page.items.length} pending proposals`);
  });
  await time(samples.counts, runs, () => tabCounts(engine));
  await time(samples.decided, Math.max(2, Math.floor(runs / 10)), () =>
    engine.proposals.count(MEASURED_TENANT, { status: FINAL_STATUSES }),
  );
  await time(samples.open, runs, async () => {
    const proposal = await engine.proposals.get(MEASURED_TENANT, at.opened);
    if (!proposal) throw new Error('the opened proposal is missing');
    const timeline = await engine.audit.timeline(MEASURED_TENANT, proposal.id);
    if (timeline.eventCount === 0) throw new Error('the opened proposal has no audit events');
  });
  // Every approval claims a proposal of its own, each verified against its stored contract.
  for (let i = 0; i < approvals; i++) {
    const p = at.toApprove.shift();
    if (!p) throw new Error('no proposal left to approve');
    const t0 = performance.now();
    const r = await engine.proposals.approve({
      tenant: MEASURED_TENANT,
      proposalId: p.id,
      approver,
      seenDigest: p.digest,
    });
    samples.approve.push(performance.now() - t0);
    if (r.kind !== 'claimed') throw new Error(`approve failed: ${JSON.stringify(r)}`);
  }
}

/**
 * Grows one database per size, then measures them in interleaved rounds (the order reversed every
 * other round), so a change of machine load during the run weighs on every size alike.
 */
async function runStore(
  open: (size: number) => Promise<Backend>,
  sizes: readonly number[],
  plans: boolean,
): Promise<Map<number, SizeFigures>> {
  const perRound = Math.max(1, Math.ceil(APPROVALS / ROUNDS));
  const runs = Math.max(1, Math.ceil(ITERATIONS / ROUNDS));
  const instances: Instance[] = [];
  try {
    for (const size of sizes) {
      const backend = await open(size);
      try {
        // A warm-up round, the measured rounds, and one approval whose statements --plans explains.
        instances.push(await prepare(backend, size, perRound * (ROUNDS + 1) + 1));
      } catch (error) {
        await backend.close();
        throw error;
      }
    }
    const samples = new Map<number, Samples>(
      sizes.map((size) => [size, { list: [], counts: [], decided: [], open: [], approve: [] }]),
    );
    // A warm-up round, not counted: each database's caches and statements as in service.
    for (const at of instances)
      await measureRound(at, { list: [], counts: [], decided: [], open: [], approve: [] }, runs, perRound);
    for (let round = 0; round < ROUNDS; round++) {
      for (const at of round % 2 === 0 ? instances : [...instances].reverse())
        await measureRound(at, samples.get(at.size)!, runs, perRound);
      process.stderr.write(`${instances[0]!.backend.name}: round ${round + 1} of ${ROUNDS} measured\n`);
    }
    const figures = new Map<number, SizeFigures>();
    for (const at of instances) {
      const s = samples.get(at.size)!;
      const [pending, reconcile, recent] = await tabCounts(at.engine);
      figures.set(at.size, {
        list: median(s.list),
        counts: median(s.counts),
        decided: median(s.decided),
        open: median(s.open),
        approve: median(s.approve),
        matched: {
          pending,
          reconcile,
          recent,
          decided: await at.engine.proposals.count(MEASURED_TENANT, { status: FINAL_STATUSES }),
        },
        seedSeconds: at.seedSeconds,
        bytes: await at.backend.bytes(),
      });
    }
    const largest = instances[instances.length - 1];
    if (plans && largest) {
      largest.backend.log.start();
      await measureRound(largest, { list: [], counts: [], decided: [], open: [], approve: [] }, 1, 1);
      // The other tabs' first pages too (the reconciliation tab's statement is the pending page's).
      await largest.engine.proposals.list(MEASURED_TENANT, { ...recentTab(), limit: PAGE });
      await printPlans(largest.backend, largest.backend.log.stop());
    }
    return figures;
  } finally {
    for (const at of instances) {
      await at.engine.close();
      await at.backend.close();
    }
  }
}

async function printPlans(backend: Backend, statements: readonly RecordedStatement[]): Promise<void> {
  console.log(`\nQuery plans on ${backend.name} (every statement the measured paths ran):`);
  for (const statement of statements) {
    if (!hasPlan(statement.sql)) continue;
    const plan = await backend.plan(statement);
    const scans = backend.scans(plan);
    const text = statement.sql.replace(/\s+/g, ' ');
    console.log(
      `${scans.length > 0 ? 'SCAN ' : 'ok   '} ${text.length > 160 ? `${text.slice(0, 157)}…` : text}`,
    );
    for (const line of plan) console.log(`        ${line}`);
  }
}

function printTable(name: string, figures: Map<number, SizeFigures>): void {
  const header = [
    'proposals',
    'seed s',
    'MB',
    'list (first pending page)',
    'tab counts',
    'matched (pending / reconcile / recent)',
    'all decided (O(n))',
    'open',
    'approve',
  ];
  const rows = [...figures].map(([size, f]) => [
    count(size),
    f.seedSeconds.toFixed(1),
    (f.bytes / 1e6).toFixed(0),
    `${f.list.toFixed(3)} ms`,
    `${f.counts.toFixed(3)} ms`,
    `${count(f.matched.pending)} / ${count(f.matched.reconcile)} / ${count(f.matched.recent)}`,
    `${f.decided.toFixed(3)} ms (${count(f.matched.decided)})`,
    `${f.open.toFixed(3)} ms`,
    `${f.approve.toFixed(3)} ms`,
  ]);
  console.log(`\n${name}`);
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map((_, i) => (i === 0 || i === 5 ? ' --- ' : ' ---: ')).join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  const sizes = [...figures.keys()];
  const first = figures.get(sizes[0]!)!;
  const last = figures.get(sizes[sizes.length - 1]!)!;
  if (sizes.length > 1) {
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    console.log(
      `${count(sizes[sizes.length - 1]!)} / ${count(sizes[0]!)}: list ${ratio(last.list, first.list)} (target ≤ 1.5×), open ${ratio(last.open, first.open)}, approve ${ratio(last.approve, first.approve)}, tab counts ${ratio(last.counts, first.counts)}`,
    );
  }
}

async function main(): Promise<void> {
  const sizes = sizesOption();
  const stores = storesOption();
  const plans = process.argv.includes('--plans');
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `${cpus().length} CPUs (load average ${load} at start); Node ${process.version}; ${TENANTS} tenants, measured tenant ${MEASURED_TENANT}; page of ${PAGE}; one database per size, measured in ${ROUNDS} interleaved rounds after a warm-up round; medians of ${ROUNDS * Math.ceil(ITERATIONS / ROUNDS)} runs (approvals: ${ROUNDS * Math.ceil(APPROVALS / ROUNDS)})`,
  );
  const results: Partial<Record<'sqlite' | 'postgres', Map<number, SizeFigures>>> = {};
  for (const name of stores) {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-scale-'));
    try {
      if (name === 'postgres') {
        const probe = new pg.Client({ connectionString: PG_URL });
        await probe.connect();
        const version = String((await probe.query('SHOW server_version')).rows[0]['server_version']);
        await probe.end();
        console.log(`PostgreSQL ${version} at ${describeStoreTarget(PG_URL)}`);
      }
      results[name] = await runStore(
        (size) => (name === 'sqlite' ? sqliteBackend(join(dir, `scale-${size}.db`)) : postgresBackend()),
        sizes,
        plans,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    printTable(name === 'sqlite' ? 'SQLite (WAL file)' : 'PostgreSQL', results[name]!);
  }
  const by = (pick: (f: SizeFigures) => number) =>
    Object.fromEntries(
      Object.entries(results).map(([name, figures]) => [
        name,
        Object.fromEntries([...figures].map(([size, f]) => [String(size), pick(f)])),
      ]),
    );
  const list = by((f) => f.list);
  printJsonResult({
    ...list,
    open: by((f) => f.open),
    approve: by((f) => f.approve),
    tab_counts: by((f) => f.counts),
    all_decided_count: by((f) => f.decided),
  });
}

await main();
