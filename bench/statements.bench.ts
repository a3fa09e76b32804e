/**
 * Where a lifecycle's time goes, statement by statement: the lifecycle benchmark's two sides (the
 * engine and the same-rows floor, see lifecycle-flows.ts) on better-sqlite3 databases whose
 * statements are timed one by one. Prints, for each side, every statement's runs and wall µs per
 * lifecycle (wall and CPU; CPU from getrusage around each statement, so only its average over many
 * runs means anything), the SQL totals, and the CPU left to JavaScript (CPU per lifecycle minus
 * the statements' CPU). Compare sides within one run only: timing each statement adds about the same
 * few µs per statement to both.
 * Run: npm run bench:statements  (CYCLES, default 2000; NO_CHECKPOINT=1 turns WAL checkpoints off)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqliteDatabase } from '../src/store/sqlite/index.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { printJsonResult } from './json-result.js';
import { engineFlow, floorFlow, type LifecycleFlow } from './lifecycle-flows.js';

const CYCLES = Number(process.env['CYCLES'] ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'countersign-statements-'));
type Statement = ReturnType<SqliteDatabase['prepare']>;
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => SqliteDatabase;

interface Timing {
  runs: number;
  ns: bigint;
  cpuUs: number;
}

/** A database whose prepared statements add their run time to `timings` while `timing.on`. */
function timedDatabase(path: string, timings: Map<string, Timing>, timing: { on: boolean }): SqliteDatabase {
  const db = new Database(path);
  const prepare = db.prepare.bind(db);
  const wrap = (text: string, statement: Statement): Statement => {
    const timed =
      <A extends unknown[], R>(method: (...a: A) => R) =>
      (...a: A): R => {
        if (!timing.on) return method(...a);
        const cpu0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        const result = method(...a);
        const ns = process.hrtime.bigint() - t0;
        const cpu = process.cpuUsage(cpu0);
        const t = timings.get(text) ?? { runs: 0, ns: 0n, cpuUs: 0 };
        t.runs++;
        t.ns += ns;
        t.cpuUs += cpu.user + cpu.system;
        timings.set(text, t);
        return result;
      };
    return {
      run: timed(statement.run.bind(statement)),
      get: timed(statement.get.bind(statement)),
      all: timed(statement.all.bind(statement)),
    };
  };
  return Object.assign(Object.create(db) as SqliteDatabase, {
    prepare: (text: string) => wrap(text, prepare(text)),
    pragma: db.pragma.bind(db),
    exec: db.exec.bind(db),
    close: db.close.bind(db),
  });
}

interface Side {
  readonly name: string;
  readonly timings: Map<string, Timing>;
  readonly cpuUs: number;
}

async function measure(name: string, open: (db: SqliteDatabase) => Promise<LifecycleFlow>): Promise<Side> {
  const path = join(dir, `${name}.db`);
  const schema = new SqliteStore({ path });
  await schema.migrate();
  await schema.close();
  const timings = new Map<string, Timing>();
  const timing = { on: false };
  const db = timedDatabase(path, timings, timing);
  // NO_CHECKPOINT=1: no automatic WAL checkpoints on either side, so each COMMIT is its own cost.
  if (process.env['NO_CHECKPOINT'] === '1') db.pragma('wal_autocheckpoint = 0');
  const flow = await open(db);
  for (let i = 0; i < 200; i++) await flow.cycle(-i - 1);
  timing.on = true;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < CYCLES; i++) await flow.cycle(i);
  const cpu = process.cpuUsage(cpu0);
  timing.on = false;
  await flow.close();
  return { name, timings, cpuUs: (cpu.user + cpu.system) / CYCLES };
}

const sides = [
  await measure('floor', async (db) => floorFlow(db)),
  await measure('engine', (db) => engineFlow(new SqliteStore({ database: db }))),
];
const lines: string[] = [`statements per lifecycle: ${CYCLES} lifecycles per side, Node ${process.version}`];
const figures: Record<string, Record<string, number>> = {};
for (const side of sides) {
  const rows = [...side.timings.entries()].sort((a, b) => Number(b[1].ns - a[1].ns));
  let ns = 0n;
  let cpuUs = 0;
  let runs = 0;
  lines.push(
    '',
    `### ${side.name}`,
    '',
    '| wall µs | CPU µs | runs | statement (per lifecycle) |',
    '| ---: | ---: | ---: | --- |',
  );
  for (const [text, t] of rows) {
    ns += t.ns;
    cpuUs += t.cpuUs;
    runs += t.runs;
    const shown = text.replace(/\s+/g, ' ').slice(0, 120);
    lines.push(
      `| ${(Number(t.ns) / 1e3 / CYCLES).toFixed(1)} | ${(t.cpuUs / CYCLES).toFixed(1)} | ${(t.runs / CYCLES).toFixed(2)} | \`${shown}\` |`,
    );
  }
  const sqlWall = Number(ns) / 1e3 / CYCLES;
  const sqlCpu = cpuUs / CYCLES;
  lines.push(
    '',
    `${side.name}: ${(runs / CYCLES).toFixed(1)} statements per lifecycle; in SQL ${sqlWall.toFixed(1)} µs wall, ${sqlCpu.toFixed(1)} µs CPU; the whole lifecycle ${side.cpuUs.toFixed(1)} µs CPU, so ${(side.cpuUs - sqlCpu).toFixed(1)} µs CPU outside SQL`,
  );
  figures[side.name] = {
    statements: runs / CYCLES,
    sql_wall_us: sqlWall,
    sql_cpu_us: sqlCpu,
    cpu_us: side.cpuUs,
  };
}
process.stdout.write(`${lines.join('\n')}\n`);
rmSync(dir, { recursive: true, force: true });
printJsonResult(figures);
