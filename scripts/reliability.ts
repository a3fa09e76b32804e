/**
 * `npm run reliability`: runs the LARGE versions of the reliability suites (test/reliability/)
 * and prints a summary table of what was tried and what held. CI runs the same suites at their
 * small size with `npm test`.
 *
 *   COUNTERSIGN_TEST_PG_URL=postgres://postgres@127.0.0.1:5432/test npm run reliability
 *
 * Without COUNTERSIGN_TEST_PG_URL the PostgreSQL half is skipped (and the table says so).
 * Extra arguments go to vitest, e.g. `npm run reliability -- test/reliability/races.integration.test.ts`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Figure } from '../test/reliability/support/report.js';

const reportDir = mkdtempSync(join(tmpdir(), 'countersign-reliability-report-'));
const files = process.argv.slice(2);
const started = Date.now();
// One file at a time: the suites start their own processes and time themselves.
const run = spawnSync(
  'npx',
  ['vitest', 'run', '--no-file-parallelism', ...(files.length > 0 ? files : ['test/reliability'])],
  {
    stdio: 'inherit',
    env: { ...process.env, COUNTERSIGN_RELIABILITY: 'large', COUNTERSIGN_RELIABILITY_REPORT: reportDir },
  },
);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);

const path = join(reportDir, 'figures.jsonl');
const figures: Figure[] = existsSync(path)
  ? readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Figure)
  : [];
rmSync(reportDir, { recursive: true, force: true });

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: readonly string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  return [
    line(rows[0]!),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

function detail(f: Figure): string {
  return Object.entries(f.detail ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

const out: string[] = [];
out.push(
  '',
  `countersign reliability (large run, ${minutes} min, vitest exit ${run.status ?? run.signal})`,
  '',
);
out.push(
  `PostgreSQL: ${process.env['COUNTERSIGN_TEST_PG_URL'] ? 'real server from COUNTERSIGN_TEST_PG_URL' : 'SKIPPED (set COUNTERSIGN_TEST_PG_URL to a real server)'}`,
  '',
);
for (const suite of ['faults', 'races', 'bad-input', 'tamper'] as const) {
  const rows = figures.filter((f) => f.suite === suite);
  if (rows.length === 0) continue;
  out.push(`## ${suite}`, '');
  out.push(
    table([
      ['what', 'backend', 'tried', 'held', 'detail'],
      ...rows.map((f) => [f.what, f.backend, String(f.tried), String(f.held), detail(f)]),
    ]),
    '',
  );
}
const kills = figures.filter((f) => f.suite === 'faults' && f.what.startsWith('SIGKILL'));
if (kills.length > 0) {
  const sum = (key: string) => kills.reduce((n, f) => n + Number(f.detail?.[key] ?? 0), 0);
  out.push(
    `SIGKILLs: ${kills.reduce((n, f) => n + f.tried, 0)} across ${new Set(kills.map((f) => f.what)).size} points × ${new Set(kills.map((f) => f.backend)).size} backends; survived ${kills.reduce((n, f) => n + f.held, 0)}; duplicates ${sum('duplicates')}; losses ${sum('lost')}`,
  );
}
const payloads = figures.filter((f) => f.suite === 'bad-input').reduce((n, f) => n + f.tried, 0);
if (payloads > 0) out.push(`Bad-input payloads tried: ${payloads}`);
const held = figures.every((f) => f.held === f.tried);
out.push(
  held
    ? 'Every case held.'
    : `NOT HELD: ${figures
        .filter((f) => f.held !== f.tried)
        .map((f) => `${f.suite}/${f.what}/${f.backend}`)
        .join(', ')}`,
  '',
);
process.stdout.write(`${out.join('\n')}\n`);
process.exitCode = run.status ?? 1;
