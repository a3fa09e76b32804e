/**
 * Where an approved `invoice.pay` writes its WAL, transaction by transaction, from SQLite's own
 * files: the engine (propose, the approver's page load, approve + execute, handback) on a store
 * whose every write transaction is measured. Before each transaction the WAL is checkpointed and
 * truncated; after its COMMIT the frames in the -wal file are read and each page is named by the
 * b-tree it belongs to (the `dbstat` table; an overflow page is named `… (overflow)`, a page no
 * b-tree owns `(free list)`). Prints, per transaction, its statements (reads among them), its WAL
 * bytes and the pages it wrote by b-tree, and the totals per lifecycle.
 * Run: npm run bench:wal  (CYCLES, default 1000 before the measured ones; SAMPLES, default 100
 * lifecycles measured, the first printed in full and all averaged per b-tree; FLOOR=1 measures the
 * same-rows floor of lifecycle-flows.ts instead; DUMP=1 prints each statement's parameters to stderr;
 * PAGE_SIZE=n makes the database with n-byte pages instead of the store's default, for comparison)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoOperations, demoWorld } from '../src/demo/demo-world.js';
import { type Actor, createEngine } from '../src/index.js';
import type { SqliteDatabase } from '../src/store/sqlite/index.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { printJsonResult } from './json-result.js';
import { floorFlow } from './lifecycle-flows.js';

const CYCLES = Number(process.env['CYCLES'] ?? 1000);
const SAMPLES = Math.max(1, Number(process.env['SAMPLES'] ?? 100));
const dir = mkdtempSync(join(tmpdir(), 'countersign-wal-'));
const path = join(dir, 'countersign.db');
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => SqliteDatabase;
type Statement = ReturnType<SqliteDatabase['prepare']>;

interface Transaction {
  statements: string[];
  walBytes: number;
  pages: Map<string, number>;
}
const measured: Transaction[] = [];
const state = { on: false, current: undefined as Transaction | undefined };

/** The b-tree (or overflow chain) each page number belongs to, read from `dbstat`. */
function pageOwners(db: SqliteDatabase): Map<number, string> {
  const rows = db.prepare('SELECT name, pageno, pagetype FROM dbstat').all() as {
    name: string;
    pageno: number;
    pagetype: string;
  }[];
  return new Map(rows.map((r) => [r.pageno, r.pagetype === 'overflow' ? `${r.name} (overflow)` : r.name]));
}

/** The page numbers of the frames in the WAL file, in order. */
function walFrames(): { bytes: number; pages: number[] } {
  let wal: Buffer;
  try {
    wal = readFileSync(`${path}-wal`);
  } catch {
    return { bytes: 0, pages: [] };
  }
  const pageSize = wal.readUInt32BE(8);
  const pages: number[] = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) pages.push(wal.readUInt32BE(at));
  return { bytes: wal.length, pages };
}

const raw = new Database(path);
const probe = new Database(path);
const database: SqliteDatabase = {
  prepare(text: string): Statement {
    const statement = raw.prepare(text);
    const note = () => {
      if (state.on && state.current) state.current.statements.push(text.replace(/\s+/g, ' ').slice(0, 110));
    };
    const dump = (p: unknown[]) => {
      if (process.env['DUMP'] && state.on) process.stderr.write(`${text}\n  ${JSON.stringify(p)}\n`);
    };
    if (text === 'BEGIN IMMEDIATE') {
      return {
        run: (...p: unknown[]) => {
          if (state.on) {
            raw.pragma('wal_checkpoint(TRUNCATE)');
            state.current = { statements: [], walBytes: 0, pages: new Map() };
          }
          return statement.run(...p);
        },
        get: statement.get.bind(statement),
        all: statement.all.bind(statement),
      };
    }
    if (text === 'COMMIT') {
      return {
        run: (...p: unknown[]) => {
          const result = statement.run(...p);
          const tx = state.current;
          if (state.on && tx) {
            const frames = walFrames();
            const owners = pageOwners(probe);
            tx.walBytes = frames.bytes;
            for (const page of frames.pages) {
              const owner = owners.get(page) ?? (page === 1 ? 'sqlite_schema (header)' : '(free list)');
              tx.pages.set(owner, (tx.pages.get(owner) ?? 0) + 1);
            }
            measured.push(tx);
            state.current = undefined;
          }
          return result;
        },
        get: statement.get.bind(statement),
        all: statement.all.bind(statement),
      };
    }
    return {
      run: (...p: unknown[]) => {
        note();
        dump(p);
        return statement.run(...p);
      },
      get: (...p: unknown[]) => {
        note();
        dump(p);
        return statement.get(...p);
      },
      all: (...p: unknown[]) => {
        note();
        dump(p);
        return statement.all(...p);
      },
    };
  },
  pragma: raw.pragma.bind(raw),
  exec: raw.exec.bind(raw),
  close: raw.close.bind(raw),
  get inTransaction() {
    return raw.inTransaction;
  },
};

// PAGE_SIZE=n: the database made with n-byte pages instead of the store's default (for comparison).
const store = new SqliteStore({
  database,
  synchronous: 'NORMAL',
  ...(process.env['PAGE_SIZE'] ? { pageSize: Number(process.env['PAGE_SIZE']) } : {}),
});
// FLOOR=1: the same-rows floor of lifecycle-flows.ts instead of the engine (same rows, same transactions).
if (process.env['FLOOR'] === '1') await store.migrate();
const floor = process.env['FLOOR'] === '1' ? floorFlow(database) : undefined;
const world = demoWorld();
const engine = await createEngine({ store, operations: demoOperations(world), limits: BENCH_LIMITS });
const ada: Actor = { id: 'user:ada@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] };

async function lifecycle(i: number): Promise<void> {
  if (floor) return floor.cycle(i);
  const invoiceId = `inv-w${i}`;
  world.invoices.add({
    tenant: 'acme',
    id: invoiceId,
    supplierName: 'Northwind Paper Co.',
    supplierAccount: 'acct-supplier-7',
    dueMinor: 24_049,
    currency: 'USD',
    status: 'open',
  });
  const runId = `run-w${i}`;
  const proposed = await engine.proposals.propose({
    operation: 'invoice.pay',
    request: { invoice_id: invoiceId },
    tenant: 'acme',
    resource: 'invoice:*',
    requestedBy: 'agent:acme-assistant',
    runId,
  });
  if (proposed.kind !== 'proposed') throw new Error(`propose: ${proposed.kind}`);
  const shown = await engine.proposals.get('acme', proposed.proposal.id);
  const done = await engine.proposals.approveAndExecute({
    tenant: 'acme',
    proposalId: proposed.proposal.id,
    approver: ada,
    seenDigest: shown!.digest,
  });
  if (done.kind !== 'completed' || done.outcome.kind !== 'succeeded') throw new Error('lifecycle failed');
  const items = await engine.proposals.handback({ tenant: 'acme', runId });
  if (items[0]?.status !== 'succeeded') throw new Error('handback');
}

for (let i = 0; i < CYCLES; i++) await lifecycle(i);
state.on = true;
await lifecycle(CYCLES);
const first = measured.length;
for (let i = 1; i < SAMPLES; i++) await lifecycle(CYCLES + i);
state.on = false;

// Every sampled lifecycle, per b-tree: a young b-tree splits more often than an old one, and a
// growing file rewrites its header page, so one lifecycle alone is not the steady state.
const byOwner = new Map<string, number>();
let sampledBytes = 0;
for (const tx of measured) {
  sampledBytes += tx.walBytes;
  for (const [owner, count] of tx.pages) byOwner.set(owner, (byOwner.get(owner) ?? 0) + count);
}
let totalBytes = 0;
let totalStatements = 0;
const lines: string[] = [
  `WAL per approved invoice.pay after ${CYCLES} lifecycles (page size ${raw.pragma('page_size', { simple: true })})`,
];
measured.slice(0, first).forEach((tx, n) => {
  totalBytes += tx.walBytes;
  totalStatements += tx.statements.length;
  const reads = tx.statements.filter((s) => /^\s*SELECT/i.test(s)).length;
  lines.push(
    '',
    `transaction ${n + 1}: ${tx.statements.length} statements (${reads} reads), WAL ${(tx.walBytes / 1024).toFixed(1)} KB, ${[...tx.pages.values()].reduce((a, b) => a + b, 0)} pages`,
  );
  for (const s of tx.statements) lines.push(`  ${s}`);
  for (const [owner, count] of [...tx.pages].sort((a, b) => b[1] - a[1]))
    lines.push(`  ${String(count).padStart(3)} × ${owner}`);
});
lines.push(
  '',
  `per lifecycle: ${first} write transactions, ${totalStatements} statements in them, WAL ${(totalBytes / 1024).toFixed(1)} KB`,
  '',
  `pages per lifecycle, the mean of ${SAMPLES} lifecycles (WAL ${(sampledBytes / SAMPLES / 1024).toFixed(1)} KB):`,
);
for (const [owner, count] of [...byOwner].sort((a, b) => b[1] - a[1]))
  lines.push(`  ${(count / SAMPLES).toFixed(2).padStart(6)} × ${owner}`);
lines.push('');
process.stdout.write(lines.join('\n'));
await engine.close();
probe.close();
if ((raw as unknown as { open: boolean }).open) raw.close();
rmSync(dir, { recursive: true, force: true });
printJsonResult({
  wal_bytes: totalBytes,
  wal_bytes_mean: sampledBytes / SAMPLES,
  write_transactions: first,
  statements: totalStatements,
});
