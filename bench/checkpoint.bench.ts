/**
 * What the store's checkpoint size saves: full lifecycles of an approved `invoice.pay` through the
 * engine on two SQLite files, one with the store's setting (a checkpoint every
 * `SQLITE_CHECKPOINT_BYTES` of WAL) and one with SQLite's default of 1,000 pages (1 MiB with 1 KiB
 * pages). Both run in every round, the order alternated; the figure is the median of the per-round
 * CPU ratios, so a slower stretch of a busy machine moves both sides of a round together.
 * Run: npm run bench:checkpoint  (CYCLES per side per round, default 1500; ROUNDS, default 10)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQLITE_PAGE_SIZE, SqliteStore } from '../src/store/sqlite/index.js';
import { SQLITE_CHECKPOINT_BYTES, walAutocheckpointPages } from '../src/store/sqlite/sqlite-driver.js';
import { printJsonResult } from './json-result.js';
import { engineFlow, type LifecycleFlow } from './lifecycle-flows.js';

const CYCLES = Number(process.env['CYCLES'] ?? 1500);
const ROUNDS = Number(process.env['ROUNDS'] ?? 10);
const dir = mkdtempSync(join(tmpdir(), 'countersign-checkpoint-'));

interface Side {
  readonly name: string;
  readonly flow: LifecycleFlow;
  readonly cpu: number[];
}

async function side(name: string, pages: number | undefined): Promise<Side> {
  const store = new SqliteStore({ path: join(dir, `${name}.db`) });
  const flow = await engineFlow(store);
  if (pages !== undefined) store.database.pragma(`wal_autocheckpoint = ${pages}`);
  for (let i = 0; i < 300; i++) await flow.cycle(-i - 1);
  return { name, flow, cpu: [] };
}

const pageSize = SQLITE_PAGE_SIZE;
const store = await side('store', undefined);
const sqliteDefault = await side('sqlite-default', 1000);
let next = 0;
const ratios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const s of round % 2 === 0 ? [store, sqliteDefault] : [sqliteDefault, store]) {
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < CYCLES; i++) await s.flow.cycle(next++);
    const c = process.cpuUsage(cpu0);
    s.cpu.push((c.user + c.system) / CYCLES);
  }
  ratios.push(store.cpu[round]! / sqliteDefault.cpu[round]!);
}
await store.flow.close();
await sqliteDefault.flow.close();
rmSync(dir, { recursive: true, force: true });

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratio = median(ratios);
console.log(
  `checkpoint benchmark (approved invoice.pay, ${pageSize}-byte pages): ${CYCLES} lifecycles × ${ROUNDS} rounds per side`,
);
console.log(
  `every ${SQLITE_CHECKPOINT_BYTES / 1024 / 1024} MiB of WAL (wal_autocheckpoint ${walAutocheckpointPages(pageSize)}): ${median(store.cpu).toFixed(0)} CPU µs per lifecycle`,
);
console.log(
  `every 1,000 pages (SQLite's default): ${median(sqliteDefault.cpu).toFixed(0)} CPU µs per lifecycle`,
);
console.log(
  `ratio, median of per-round ratios: ${ratio.toFixed(3)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
);
printJsonResult({ cpu_ratio_vs_sqlite_default: ratio, rounds: ratios });
