/**
 * The performance targets (BENCHMARKS.md lists them) from one run: runs `bench:lifecycle`,
 * `bench:peers`, `bench:postgres` and `bench:scale` one after another, each with `--json`, and
 * prints one markdown table of every target, its figure and whether it is met, then the figures as
 * one JSON object on the last line.
 * Run: `npm run bench:targets` (PostgreSQL at COUNTERSIGN_TEST_PG_URL, as the benches it runs).
 *
 * Environment is passed through, so `CYCLES`, `BENCH_CLAIMS`, `BENCH_ROUNDS`… tune the benches as
 * usual; `--quick` sets small defaults for a look (the figures are then only indicative).
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';

type Figures = Record<string, unknown>;

interface Target {
  readonly name: string;
  readonly figure: (all: Readonly<Record<string, Figures>>) => number | undefined;
  readonly bound: string;
  readonly met: (value: number) => boolean;
  /** Where measured: the same figure for a hand-written floor storing the same rows (the best reachable). */
  readonly floor?: (all: Readonly<Record<string, Figures>>) => number | undefined;
  /** How the figure is shown after its value (default `×`, a ratio). */
  readonly unit?: string;
}

const quick = process.argv.includes('--quick');
const QUICK_ENV: Record<string, string> = {
  CYCLES: '300',
  ROUNDS: '3',
  BENCH_CLAIMS: '300',
  BENCH_ROUNDS: '3',
  BENCH_ITERATIONS: '60',
  BENCH_APPROVALS: '20',
};

const BENCHES: readonly {
  readonly key: string;
  readonly script: string;
  readonly args: readonly string[];
}[] = [
  { key: 'lifecycle', script: 'bench/lifecycle.bench.ts', args: [] },
  { key: 'peers', script: 'bench/peers.bench.ts', args: [] },
  { key: 'postgres', script: 'bench/postgres.bench.ts', args: [] },
  { key: 'scale', script: 'bench/scale.bench.ts', args: quick ? ['--sizes', '1000,10000'] : [] },
];

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const at = (figures: Figures | undefined, ...path: string[]): number | undefined => {
  let value: unknown = figures;
  for (const key of path)
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return num(value);
};
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b;
const kib = (bytes: number | undefined) => (bytes === undefined ? undefined : bytes / 1024);
const largest = (figures: Figures | undefined, store: string): number | undefined => {
  const sizes = figures?.[store];
  if (typeof sizes !== 'object' || sizes === null) return undefined;
  const keys = Object.keys(sizes).map(Number).filter(Number.isFinite);
  return keys.length === 0 ? undefined : at(figures, store, String(Math.max(...keys)));
};

const TARGETS: readonly Target[] = [
  {
    name: 'lifecycle CPU / same-rows SQLite floor',
    figure: (f) => at(f['lifecycle'], 'cpu_ratio'),
    bound: '≤ 1.3×',
    met: (v) => v <= 1.3,
  },
  {
    name: 'approval overhead / OpenAI Agents JS, durable',
    figure: (f) => at(f['peers'], 'overhead_vs_openai_agents_durable'),
    bound: '≤ 1.0×',
    met: (v) => v <= 1,
    floor: (f) => at(f['peers'], 'floor_vs_openai_agents_durable'),
  },
  {
    name: 'approval overhead / LangGraph.js, durable',
    figure: (f) => at(f['peers'], 'overhead_vs_langgraph_durable'),
    bound: '≤ 0.5×',
    met: (v) => v <= 0.5,
    floor: (f) => at(f['peers'], 'floor_vs_langgraph_durable'),
  },
  {
    name: 'WAL per approved invoice.pay',
    figure: (f) => kib(at(f['peers'], 'wal_bytes_per_approval', 'countersign')),
    bound: '≤ 80 KB',
    unit: ' KB',
    met: (v) => v <= 80,
    floor: (f) => kib(at(f['peers'], 'floor_wal_bytes_per_approval')),
  },
  {
    name: 'PostgreSQL claims, one tenant, 4 connections / 1',
    figure: (f) => ratio(at(f['postgres'], 'one_tenant', '4'), at(f['postgres'], 'one_tenant', '1')),
    bound: '≥ 2.5×',
    met: (v) => v >= 2.5,
  },
  {
    name: 'PostgreSQL claims, one tenant, 8 connections / 1',
    figure: (f) => ratio(at(f['postgres'], 'one_tenant', '8'), at(f['postgres'], 'one_tenant', '1')),
    bound: '≥ 4×',
    met: (v) => v >= 4,
  },
  {
    name: 'first pending page, SQLite, largest size / 10³',
    figure: (f) => ratio(largest(f['scale'], 'sqlite'), at(f['scale'], 'sqlite', '1000')),
    bound: '≤ 1.5×',
    met: (v) => v <= 1.5,
  },
  {
    name: 'first pending page, PostgreSQL, largest size / 10³',
    figure: (f) => ratio(largest(f['scale'], 'postgres'), at(f['scale'], 'postgres', '1000')),
    bound: '≤ 1.5×',
    met: (v) => v <= 1.5,
  },
];

/** Runs one bench with `--json`, its output passed through to stderr; resolves its last line parsed. */
function run(script: string, args: readonly string[]): Promise<Figures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args, '--json'], {
      env: { ...(quick ? QUICK_ENV : {}), ...process.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${script} exited with ${code}`));
      const last = out.trimEnd().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(last) as Figures);
      } catch {
        reject(new Error(`${script}: its last line is not JSON: ${last.slice(0, 200)}`));
      }
    });
  });
}

async function main(): Promise<void> {
  const started = new Date().toISOString();
  const load = loadavg().map((l) => l.toFixed(2));
  const all: Record<string, Figures> = {};
  for (const bench of BENCHES) {
    process.stderr.write(`\n== ${bench.script} ==\n`);
    all[bench.key] = await run(bench.script, bench.args);
  }
  console.log(
    `\nPerformance targets, one run started ${started}; Node ${process.version}, ${cpus().length} CPUs, load average ${load.join(' ')} at start${quick ? ' (--quick: indicative only)' : ''}\n`,
  );
  const times = (value: number | undefined, unit = '×') =>
    value === undefined ? 'n/a' : `${value.toFixed(unit === '×' ? 2 : 1)}${unit}`;
  console.log('| target | figure | bound | met | same-rows floor |');
  console.log('| --- | ---: | --- | --- | --- |');
  for (const t of TARGETS) {
    const value = t.figure(all);
    const floor = t.floor?.(all);
    const reach =
      t.floor === undefined
        ? '—'
        : `${times(floor, t.unit)}${floor !== undefined && !t.met(floor) ? ' (bound below the floor)' : ''}`;
    console.log(
      `| ${t.name} | ${times(value, t.unit)} | ${t.bound} | ${value === undefined ? 'n/a' : t.met(value) ? 'yes' : '**no**'} | ${reach} |`,
    );
  }
  console.log(JSON.stringify(all));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
