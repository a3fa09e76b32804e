/**
 * The cost of writing a statement once with the `sql` tag, against a hand-written string and its
 * values array (what each store wrote before). Run with `npm run bench:sql-tag` (`--json` for one
 * line of figures).
 *
 * Per statement, in nanoseconds (median of interleaved rounds): the tag builds a query and
 * renders it for a dialect (text cached per template, so rendering is a lookup); the hand-written
 * baseline builds only the values array. A store statement then costs a driver round trip
 * (microseconds on SQLite, far more on PostgreSQL), which this overhead must stay well below.
 */
import { PROPOSAL_COLUMNS } from '../src/store/sql-columns.js';
import { listProposalsSql, SQLITE_PREVIEW_SQL } from '../src/store/sql-proposals.js';
import { type SqlDialect, sql, valuesStatement } from '../src/sql/sql.js';
import { printJsonResult } from './json-result.js';

const ROUNDS = 15;
const N = 200_000;
let sink = 0;

const GET = 'SELECT * FROM countersign_proposals WHERE tenant = ? AND id = ?';
const cols = PROPOSAL_COLUMNS.map(([, c]) => c);
const INSERT_TEXT = `INSERT INTO countersign_proposals (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
const insert = valuesStatement(
  `INSERT INTO countersign_proposals (${cols.join(', ')}) VALUES (`,
  cols.length,
  ')',
);
const row = cols.map((c, i) => `${c}-${i}`);

const variants: Record<string, (i: number) => void> = {
  'get: hand-written': (i) => {
    const q = { text: GET, values: ['acme', `p${i & 7}`] };
    sink += q.text.length + q.values.length;
  },
  'get: sql tag, sqlite': (i) => tagGet(i, 'sqlite'),
  'get: sql tag, postgres': (i) => tagGet(i, 'postgres'),
  'insert (32 columns): hand-written': () => {
    const q = { text: INSERT_TEXT, values: [...row] };
    sink += q.text.length + q.values.length;
  },
  'insert (32 columns): sql tag, postgres': () => {
    const q = insert([...row]).render('postgres');
    sink += q.text.length + q.values.length;
  },
  'list page (fragments): sql tag, sqlite': (i) => {
    const q = listProposalsSql('acme', { status: 'pending', limit: 20 + (i & 1) }, SQLITE_PREVIEW_SQL).render(
      'sqlite',
    );
    sink += q.text.length + q.values.length;
  },
};

function tagGet(i: number, dialect: SqlDialect): void {
  const q = sql`SELECT * FROM countersign_proposals WHERE tenant = ${'acme'} AND id = ${`p${i & 7}`}`.render(
    dialect,
  );
  sink += q.text.length + q.values.length;
}

const timings = new Map<string, number[]>(Object.keys(variants).map((k) => [k, []]));
const names = Object.keys(variants);
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + round) % names.length]!;
    const fn = variants[name]!;
    const start = process.hrtime.bigint();
    for (let i = 0; i < N; i++) fn(i);
    timings.get(name)!.push(Number(process.hrtime.bigint() - start) / N);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const figures: Record<string, number> = {};
for (const name of names) {
  figures[name] = median(timings.get(name)!);
  process.stdout.write(`${name.padEnd(44)} ${figures[name]!.toFixed(1)} ns/statement\n`);
}
if (sink === 0) process.stdout.write('\n');
printJsonResult(figures);
