/**
 * `npm run chaos`: runs the chaos suite (test/chaos/) at its LARGE size and prints what was
 * broken and what held. CI runs the same scenarios small with `npm test` (the `chaos` project).
 * Needs the built binary (`npm run build`); the PostgreSQL scenarios make a throwaway cluster
 * (binaries from /usr/lib/postgresql/N/bin or COUNTERSIGN_CHAOS_PG_BIN) and the full-disk one
 * mounts a tmpfs (root), each skipped with its reason otherwise.
 *
 *   npm run chaos
 *   npm run chaos -- test/chaos/kill-loop.test.ts
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChaosFigure } from '../test/chaos/support/verify.js';

const reportDir = mkdtempSync(join(tmpdir(), 'countersign-chaos-report-'));
const files = process.argv.slice(2);
const started = Date.now();
const run = spawnSync(
  'npx',
  ['vitest', 'run', '--project', 'chaos', '--no-file-parallelism', ...(files.length > 0 ? files : [])],
  {
    stdio: 'inherit',
    env: { ...process.env, COUNTERSIGN_CHAOS: 'large', COUNTERSIGN_CHAOS_REPORT: reportDir },
  },
);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
const path = join(reportDir, 'figures.jsonl');
const figures: ChaosFigure[] = existsSync(path)
  ? readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ChaosFigure)
  : [];
rmSync(reportDir, { recursive: true, force: true });

const out: string[] = [
  '',
  `countersign chaos (large run, ${minutes} min, vitest exit ${run.status ?? run.signal})`,
  '',
];
for (const f of figures) {
  out.push(`## ${f.scenario} (${f.backend}): ${f.faults} faults`);
  out.push(
    Object.entries(f.figures)
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
    '',
  );
}
const sum = (key: string) => figures.reduce((n, f) => n + Number(f.figures[key] ?? 0), 0);
out.push(
  `faults ${figures.reduce((n, f) => n + f.faults, 0)}; answers ok ${sum('ok')} refused ${sum('refused')} store_unavailable ${sum('store_unavailable')} cut_by_kill ${sum('cut_by_kill')}; ` +
    `server_error ${sum('server_error')} unexpected ${sum('unexpected')} connection_error ${sum('connection_error')} no_answer ${sum('no_answer')}; ` +
    `double payments ${sum('doublePayments')}; lost ${sum('lost')}; unexpected exits ${sum('unexpectedExits')}`,
  '',
);
process.stdout.write(`${out.join('\n')}\n`);
process.exitCode = run.status ?? 1;
