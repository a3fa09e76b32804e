/**
 * Full lifecycles per second of an approved `invoice.pay` — propose → approve + claim → command →
 * the provider stub → outcome, all audited — against a raw better-sqlite3 floor that writes the same
 * rows in the same four transactions (with their reads) and calls the same provider, in one run.
 * A third side adds to the floor the work the contract asks of any design (`contract-checks.ts`), so
 * the engine's cost splits into what keeping the contract costs and what the engine adds. Each
 * round runs every side on fresh databases, the order rotated and reversed every other round; the
 * ratios reported are medians of the per-round ratios, so a slower stretch of a busy machine moves
 * the sides of a round together.
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

async function floorRound(round: number, checks: boolean) {
  const path = join(dir, `floor-${checks ? 'checked-' : ''}${round}.db`);
  const schema = new SqliteStore({ path });
  await schema.migrate();
  await schema.close();
  return timed(floorFlow(new Database(path), { checks }));
}

type Run = { wall: number; cpu: number };
const sides: { name: string; run: (round: number) => Promise<Run>; runs: Run[] }[] = [
  { name: 'raw better-sqlite3 floor', run: (r) => floorRound(r, false), runs: [] },
  { name: "the floor + the contract's checks", run: (r) => floorRound(r, true), runs: [] },
  { name: 'countersign engine (full lifecycle)', run: engineRound, runs: [] },
];
// Each round in a rotated order, every other round reversed: any two sides run in both orders.
for (let round = 0; round < ROUNDS; round++) {
  const rotated = sides.map((_, i) => sides[(i + round) % sides.length]!);
  for (const side of round % 2 === 0 ? rotated : rotated.reverse()) side.runs.push(await side.run(round));
}
const [floor, checked, engine] = sides as [(typeof sides)[0], (typeof sides)[0], (typeof sides)[0]];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const perCycle = (runs: Run[]) => ({
  wall: median(runs.map((r) => r.wall)) / CYCLES,
  cpu: median(runs.map((r) => r.cpu)) / CYCLES,
});
const ratios = (top: Run[], bottom: Run[], key: keyof Run) =>
  top.map((run, round) => run[key] / bottom[round]![key]);
const pairedRatio = (top: Run[], bottom: Run[], key: keyof Run) => median(ratios(top, bottom, key));
const spread = (top: Run[], bottom: Run[], key: keyof Run) => {
  const all = ratios(top, bottom, key);
  return `${Math.min(...all).toFixed(2)}–${Math.max(...all).toFixed(2)}`;
};
const cpuRatio = pairedRatio(engine.runs, floor.runs, 'cpu');
const wallRatio = pairedRatio(engine.runs, floor.runs, 'wall');
const checkedRatio = pairedRatio(engine.runs, checked.runs, 'cpu');
const checksRatio = pairedRatio(checked.runs, floor.runs, 'cpu');
const row = (name: string, x: Run) =>
  `| ${name.padEnd(35)} | ${Math.round(1e6 / x.wall)
    .toLocaleString('en-US')
    .padStart(10)} | ${x.wall.toFixed(1).padStart(10)} | ${x.cpu.toFixed(1).padStart(10)} |`;
process.stdout.write(
  `lifecycle benchmark (approved invoice.pay): ${CYCLES} cycles × ${ROUNDS} rounds, medians (WAL, synchronous=NORMAL)\n`,
);
process.stdout.write(
  '| path                                |  cycles/s  |  wall µs   |  CPU µs    |\n|---|---|---|---|\n',
);
for (const side of sides) process.stdout.write(`${row(side.name, perCycle(side.runs))}\n`);
process.stdout.write(
  `ratio engine / floor, median of per-round ratios: wall ${wallRatio.toFixed(2)}× (rounds ${spread(engine.runs, floor.runs, 'wall')}), CPU ${cpuRatio.toFixed(2)}× (rounds ${spread(engine.runs, floor.runs, 'cpu')}; target ≤ 1.3× CPU: ${cpuRatio <= 1.3 ? 'met' : 'not met'})\n`,
);
process.stdout.write(
  `the contract's checks: floor + checks / floor ${checksRatio.toFixed(2)}× CPU (rounds ${spread(checked.runs, floor.runs, 'cpu')}); engine / (floor + checks) ${checkedRatio.toFixed(2)}× (rounds ${spread(engine.runs, checked.runs, 'cpu')})\n`,
);
rmSync(dir, { recursive: true, force: true });
printJsonResult({
  cpu_ratio: cpuRatio,
  wall_ratio: wallRatio,
  cpu_ratio_vs_checked_floor: checkedRatio,
  checked_floor_cpu_ratio: checksRatio,
  engine_cpu_us: perCycle(engine.runs).cpu,
  floor_cpu_us: perCycle(floor.runs).cpu,
  checked_floor_cpu_us: perCycle(checked.runs).cpu,
});
