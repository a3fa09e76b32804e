/**
 * Full lifecycles per second of an approved `invoice.pay` — propose → approve + claim → command →
 * the provider stub → outcome, all audited — against a raw better-sqlite3 floor that writes the same
 * rows in the same four transactions (with their reads) and calls the same provider, in one run.
 * Each round runs both sides on fresh databases, the order alternating (floor first in even rounds,
 * engine first in odd ones); the ratios reported are medians of the per-round ratios, so a slower
 * stretch of a busy machine moves both sides of a round together.
 * Run: npm run bench:lifecycle (where the time goes, statement by statement: npm run bench:statements)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite/index.js';
import type { SqliteDatabase } from '../src/store/sqlite/index.js';
import { printJsonResult } from './json-result.js';
import { engineFlow, floorFlow, type LifecycleFlow } from './lifecycle-flows.js';

const CYCLES = Number(process.env['CYCLES'] ?? 3000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => SqliteDatabase;

async function timed(flow: LifecycleFlow): Promise<{ wall: number; cpu: number }> {
  for (let i = 0; i < 200; i++) await flow.cycle(-i - 1);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CYCLES; i++) await flow.cycle(i);
  const wall = Number(process.hrtime.bigint() - t0) / 1e3;
  const c = process.cpuUsage(cpu0);
  await flow.close();
  return { wall, cpu: c.user + c.system };
}

const engineRound = async (round: number) =>
  timed(await engineFlow(new SqliteStore({ path: join(dir, `engine-${round}.db`) })));

async function floorRound(round: number) {
  const path = join(dir, `floor-${round}.db`);
  const schema = new SqliteStore({ path });
  await schema.migrate();
  await schema.close();
  return timed(floorFlow(new Database(path)));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const engineRuns: { wall: number; cpu: number }[] = [];
const floorRuns: { wall: number; cpu: number }[] = [];
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    floorRuns.push(await floorRound(round));
    engineRuns.push(await engineRound(round));
  } else {
    engineRuns.push(await engineRound(round));
    floorRuns.push(await floorRound(round));
  }
}
const e = {
  wall: median(engineRuns.map((r) => r.wall)) / CYCLES,
  cpu: median(engineRuns.map((r) => r.cpu)) / CYCLES,
};
const f = {
  wall: median(floorRuns.map((r) => r.wall)) / CYCLES,
  cpu: median(floorRuns.map((r) => r.cpu)) / CYCLES,
};
const pairedRatio = (key: 'wall' | 'cpu') =>
  median(engineRuns.map((run, round) => run[key] / floorRuns[round]![key]));
const cpuRatio = pairedRatio('cpu');
const wallRatio = pairedRatio('wall');
const spread = (key: 'wall' | 'cpu') => {
  const ratios = engineRuns.map((run, round) => run[key] / floorRuns[round]![key]);
  return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
};
const row = (name: string, x: { wall: number; cpu: number }) =>
  `| ${name.padEnd(34)} | ${Math.round(1e6 / x.wall)
    .toLocaleString('en-US')
    .padStart(10)} | ${x.wall.toFixed(1).padStart(10)} | ${x.cpu.toFixed(1).padStart(10)} |`;
process.stdout.write(
  `lifecycle benchmark (approved invoice.pay): ${CYCLES} cycles × ${ROUNDS} rounds, medians (WAL, synchronous=NORMAL)\n`,
);
process.stdout.write(
  '| path                               |  cycles/s  |  wall µs   |  CPU µs    |\n|---|---|---|---|\n',
);
process.stdout.write(
  `${row('raw better-sqlite3 floor', f)}\n${row('countersign engine (full lifecycle)', e)}\n`,
);
process.stdout.write(
  `ratio engine / floor, median of per-round ratios: wall ${wallRatio.toFixed(2)}× (rounds ${spread('wall')}), CPU ${cpuRatio.toFixed(2)}× (rounds ${spread('cpu')}; target ≤ 1.3× CPU: ${cpuRatio <= 1.3 ? 'met' : 'not met'})\n`,
);
rmSync(dir, { recursive: true, force: true });
printJsonResult({ cpu_ratio: cpuRatio, wall_ratio: wallRatio, engine_cpu_us: e.cpu, floor_cpu_us: f.cpu });
