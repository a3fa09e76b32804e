import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../support/engine.js';
import { cli } from '../support/cli.js';

const { dir, cleanup } = tempDir();
afterAll(cleanup);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const approved = {
  tenant: 'acme',
  operation: 'invoice.pay',
  invoice_id: 'inv-104',
  destination_account_id: 'acct-supplier-7',
  amount_minor: 24049,
  currency: 'USD',
};

describe('countersign canonicalize / digest', () => {
  it('canonicalizes a file, sorting keys', async () => {
    const r = await cli(['canonicalize', file('a.json', '{ "b": 1, "a": [1e2, -0, "x"] }')]);
    expect(r).toEqual({ code: 0, out: '{"a":[100,0,"x"],"b":1}\n', err: '' });
  });

  it('prints sha256 and short lines; key order does not change them', async () => {
    const a = await cli(['digest', file('d1.json', '{"a":1,"b":2}')]);
    const b = await cli(['digest', '-'], '{"b":2,"a":1}');
    expect(a.code).toBe(0);
    expect(a.out).toMatch(/^sha256 [0-9a-f]{64}\nshort [0-9a-f]{12}\n$/);
    expect(b.out).toBe(a.out);
  });

  it('bad input names the file and the position, exit 2', async () => {
    const r = await cli(['digest', file('dup.json', '{"a":1,\n "a":2}')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('dup.json: line 2, column 2');
    expect(r.err).toContain('duplicate_key');
  });
});

describe('countersign diff', () => {
  it('exit 0 when identical regardless of key order', async () => {
    const reversed = Object.fromEntries(Object.entries(approved).reverse());
    const r = await cli([
      'diff',
      file('ap.json', JSON.stringify(approved)),
      file('rq.json', JSON.stringify(reversed)),
    ]);
    expect(r).toEqual({ code: 0, out: '', err: '' });
  });

  it('one line per difference, exit 1', async () => {
    const requested = { ...approved, destination_account_id: 'acct-personal-2', expedite: true };
    const r = await cli([
      'diff',
      file('ap2.json', JSON.stringify(approved)),
      file('rq2.json', JSON.stringify(requested)),
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      '$.destination_account_id: "acct-supplier-7" -> "acct-personal-2"\n$.expedite: added true\n',
    );
  });

  it.each([
    ['invalid JSON', '{"a":'],
    ['duplicate keys', '{"a":1,"a":1}'],
    ['a lone surrogate', '{"a":"\\ud800"}'],
    ['a non-finite number', '{"a":1e400}'],
  ])('%s is exit 2', async (_name, text) => {
    const r = await cli(['diff', file('ok.json', '{"a":1}'), file('bad.json', text)]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('bad.json');
  });
});

describe('help', () => {
  it('every command has --help', async () => {
    const overview = await cli(['--help']);
    expect(overview.code).toBe(0);
    const names = [...overview.out.matchAll(/^ {2}([a-z][a-z -]*?) {2,}/gm)].map((m) => m[1]!.trim());
    expect(names.length).toBeGreaterThanOrEqual(7);
    for (const name of names) {
      const r = await cli([...name.split(' '), '--help']);
      expect(r.code, name).toBe(0);
      expect(r.out, name).toMatch(/^Usage: countersign /);
    }
  });

  it('an unknown option is a usage problem, exit 2', async () => {
    const r = await cli(['digest', '--frobnicate', 'x']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--frobnicate');
  });
});

describe('store locations: --db FILE and --store LOCATION, the same in every command', () => {
  const FORMS = 'postgres://… (or postgresql://…), pglite:DIR, pglite:memory: or a SQLite file path';
  // Each store-reading command, with the arguments it needs before it opens the store.
  const COMMANDS_WITH_A_STORE = [
    ['serve', '--demo'],
    ['mcp', '--demo', '--tenant', 'acme', '--agent-token', 'cs_agent_x'],
    ['migrate'],
    ['recover'],
    ['token', 'list'],
    ['token', 'revoke', 'tok_0000000000000000'],
    ['audit', 'verify'],
    ['audit', 'show', 'prp_x'],
    ['audit', 'checkpoint'],
    ['audit', 'export', 'prp_x'],
    ['proposals', 'list', '--tenant', 'acme'],
    ['expire-version', '--operation', 'invoice.pay', '--below', '2'],
  ];
  // The command's own words: two for the grouped commands (token, audit, proposals), else one.
  const words = (argv: readonly string[]) =>
    argv.slice(0, ['token', 'audit', 'proposals'].includes(argv[0]!) ? 2 : 1);

  it('every --help names --store LOCATION and describes its forms in the same words', async () => {
    for (const argv of COMMANDS_WITH_A_STORE) {
      const name = words(argv).join(' ');
      const help = (await cli([...words(argv), '--help'])).out;
      expect(help.split('\n')[0], name).toContain('--store LOCATION');
      expect(help.replace(/\s+/g, ' '), name).toContain(
        'postgres://USER@HOST/DB (or postgresql://…) for a PostgreSQL server several processes may share (?schema=NAME keeps the tables in a schema of their own; a password is never printed); pglite:DIR for PostgreSQL embedded in this process, its data in DIR (one process at a time; needs @electric-sql/pglite); pglite:memory: for the same in memory, lost on exit; or a SQLite FILE',
      );
    }
  });

  it('every command refuses an unknown scheme with exit 2, naming --store and the forms, never the URL', async () => {
    for (const argv of COMMANDS_WITH_A_STORE) {
      for (const [location, scheme] of [
        ['mysql://app:hunter2@db/countersign', 'mysql:'],
        ['sqlite:countersign.db', 'sqlite:'],
      ]) {
        const r = await cli([...argv, '--store', location!]);
        const name = `${argv.join(' ')} --store ${location}`;
        expect(r.code, name).toBe(2);
        expect(r.err.split('\n')[0], name).toBe(
          `countersign ${words(argv).join(' ')}: --store: "${scheme}" is not a store scheme; give ${FORMS}`,
        );
        expect(r.err, name).not.toContain('hunter2');
      }
    }
  });

  it('--db takes a SQLite file only, and not together with --store', async () => {
    const url = await cli(['token', 'list', '--db', 'postgres://app@db/countersign']);
    expect(url).toEqual({
      code: 2,
      out: '',
      err: expect.stringMatching(
        /^countersign token list: --db takes a SQLite file path; give postgres:\/\/ URLs and pglite: locations to --store\n/,
      ),
    });
    const both = await cli(['token', 'list', '--db', 'a.db', '--store', 'pglite:memory:']);
    expect(both.code).toBe(2);
    expect(both.err.split('\n')[0]).toBe(
      'countersign token list: pass --db FILE or --store LOCATION, not both',
    );
  });

  it('a pglite:DIR store migrated by one command is read by another', async () => {
    const location = `pglite:${join(dir, 'pg-data')}`;
    const migrated = await cli(['migrate', '--store', location]);
    expect(migrated.code, migrated.err).toBe(0);
    expect(migrated.out.split('\n')[0]).toBe(`store pglite ${location}`);
    expect(migrated.err).toMatch(/^applying \d+ pending migrations to pglite:/);
    const again = await cli(['migrate', '--store', location]);
    expect([again.code, again.err]).toEqual([0, '']);
    expect(again.out).toMatch(/schema version \d+: up to date\n$/);
    expect(await cli(['token', 'list', '--store', location])).toEqual({
      code: 0,
      out: 'no tokens\n',
      err: '',
    });
  });
});

describe('countersign demo and audit commands on a real SQLite file', () => {
  it('the walk-through shows one short hash at proposal, approval and execution, and the audit verifies', async () => {
    const db = join(dir, 'demo.db');
    const demo = await cli(['demo', '--db', db]);
    expect(demo.code).toBe(0);
    const hashes = [...demo.out.matchAll(/^ {3}(proposed|approved|executed) .*hash ([0-9a-f]{12})/gm)]
      .slice(0, 3)
      .map((m) => m[2]);
    expect(hashes).toHaveLength(3);
    expect(new Set(hashes).size).toBe(1);
    expect(demo.out).toContain('→ denied scope_mismatch  $.amount_minor: 24049 -> 240490');
    expect(demo.out).toContain('approving the old card → superseded');
    expect(demo.out).toContain('by user:ada@acme.test → 1 of 2 approvals; nothing ran yet');
    expect(demo.out).toMatch(/executed {2}prp_\w+ {2}hash [0-9a-f]{12} → needs_reconciliation/);
    expect(demo.out).toMatch(/audit chain: intact \(\d+ events\)/);

    const verify = await cli(['audit', 'verify', '--db', db]);
    expect(verify.code).toBe(0);
    expect(verify.out).toMatch(/^intact: 1 tenant, \d+ events/);

    const id = /next: countersign audit show (prp_\w+)/.exec(demo.out)?.[1];
    const show = await cli(['audit', 'show', id!, '--db', db]);
    expect(show.code).toBe(0);
    expect(
      show.out
        .split('\n')
        .filter((l) => /^\d{4}-/.test(l))
        .map((l) => l.split(/\s+/)[1]),
    ).toEqual(['proposed', 'approved', 'claimed', 'revalidated', 'command', 'outcome']);

    const list = await cli(['proposals', 'list', '--db', db, '--tenant', 'acme', '--status', 'superseded']);
    expect(list.code).toBe(0);
    expect(list.out.trim().split('\n')).toHaveLength(1);
    const other = await cli(['proposals', 'list', '--db', db, '--tenant', 'globex']);
    expect(other.out).toBe('no proposals for tenant globex\n');
  });

  it('a changed audit row makes verify exit 1 naming the event', async () => {
    const db = join(dir, 'tamper.db');
    await cli(['demo', '--db', db]);
    const store = new SqliteStore({ path: db });
    store.database.prepare("UPDATE countersign_audit_events SET actor = 'user:mallory' WHERE seq = 3").run();
    await store.close();
    const r = await cli(['audit', 'verify', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^broken tenant=acme event=#3 \(evt_\w+\) problem=leaf_mismatch/);
  });
});

describe('the countersign binary', () => {
  it('runs as a process and exits with the command status', async () => {
    const run = promisify(execFile);
    const p = run(process.execPath, [
      '--import',
      'tsx',
      'src/cli/main.ts',
      'diff',
      file('x.json', '{"a":1}'),
      file('y.json', '{"a":2}'),
    ]);
    await expect(p).rejects.toMatchObject({ code: 1, stdout: '$.a: 1 -> 2\n' });
  });
});
