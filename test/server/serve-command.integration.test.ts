import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NO_SEAL_KEY_WARNING } from '../../src/cli/commands/serve.js';
import { runCli } from '../../src/cli/run-cli.js';
import type { DemoCredentials } from '../../src/demo/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../support/engine.js';
import { type RunningServe, serve } from '../support/serve.js';
import { TEST_PG_URL } from '../support/postgres.js';
import { ConsoleClient } from './support/console-client.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

describe('countersign serve --demo', () => {
  it('prints ready, seeds acme and globex, writes the credentials once, proposes a realistic mix, and stops cleanly', async () => {
    const db = join(dir, 'countersign.db');
    const server = await serve(['--demo', '--db', db, '--port', '0']);
    const credentialsFile = join(dir, 'countersign-demo-credentials.json');
    expect(server.stdout.join('')).toContain(`demo: every demo login and token is in ${credentialsFile}`);
    expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
    const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as DemoCredentials;
    expect(Object.keys(credentials.tenants).sort()).toEqual(['acme', 'globex']);
    for (const tenant of ['acme', 'globex']) {
      const t = credentials.tenants[tenant]!;
      expect(t.agentToken).toMatch(/^cs_agent_/);
      expect(t.operatorToken).toMatch(/^cs_op_/);
      expect(t.operators.map((o) => o.role).sort()).toEqual(['admin', 'approver', 'approver', 'viewer']);
      expect(t.operators.map((o) => o.email)).toContain(`approver2@${tenant}.test`);
    }
    const acme = credentials.tenants['acme']!;
    const approver = acme.operators.find((o) => o.role === 'approver')!;
    expect(server.stdout.join('')).toContain(`as ${approver.email} with password ${approver.password}`);

    const list = await fetch(`${server.url}/api/v1/proposals?status=pending`, {
      headers: { authorization: `Bearer ${acme.operatorToken}` },
    });
    const items = ((await list.json()) as { items: { operation: string; preview: { title: string } }[] })
      .items;
    expect(items.map((i) => i.operation).sort()).toEqual([
      'email_broadcast.apply_draft',
      'invoice.pay',
      'invoice.pay',
      'invoice.pay',
      'invoice.pay',
      'order.refund_missing_discount',
    ]);
    expect(items.map((i) => i.preview.title)).toContain('Pay Northwind Paper Co. 240.49 USD');

    const client = new ConsoleClient(server.url);
    expect((await client.login(approver.email, approver.password)).status).toBe(303);
    expect((await client.get('/')).html).toContain('Pay Contoso Freight 12,500.00 USD');

    expect(await server.stop()).toBe(0);
    expect(server.stdout.join('')).toMatch(/stopped\n$/);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it('seals what it stores with COUNTERSIGN_SEAL_KEY, refuses a short key (exit 2), and says so when there is none', async () => {
    const db = join(dir, 'sealed.db');
    const errors: string[] = [];
    const io = { stdout: () => {}, stderr: (t: string) => errors.push(t), stdin: async () => '' };
    try {
      process.env['COUNTERSIGN_SEAL_KEY'] = 'short';
      expect(await runCli(['serve', '--demo', '--db', db, '--port', '0'], io)).toBe(2);
      expect(errors.join('')).toContain(
        'COUNTERSIGN_SEAL_KEY: must be at least 32 bytes, got 5 (for example: openssl rand -hex 32)',
      );
      expect(existsSync(db)).toBe(false);
      process.env['COUNTERSIGN_SEAL_KEY'] = 'k'.repeat(64);
      const sealed = await serve(['--demo', '--db', db, '--port', '0']);
      expect(await sealed.stop()).toBe(0);
      expect(sealed.stderr.join('')).not.toContain('COUNTERSIGN_SEAL_KEY is not set');
    } finally {
      delete process.env['COUNTERSIGN_SEAL_KEY'];
    }
    const store = new SqliteStore({ path: db });
    const raw = store.database;
    try {
      const seals = raw.prepare('SELECT seal FROM countersign_proposals').all() as { seal: string | null }[];
      expect(seals.length).toBeGreaterThan(0);
      for (const { seal } of seals) expect(seal).toMatch(/^[0-9a-f]{64}$/);
      const events = raw.prepare('SELECT seal FROM countersign_audit_events').all() as {
        seal: string | null;
      }[];
      for (const { seal } of events) expect(seal).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await store.close();
    }
    const unsealed = await serve(['--demo', '--db', join(dir, 'unsealed.db'), '--port', '0']);
    expect(await unsealed.stop()).toBe(0);
    expect(unsealed.stderr.join('')).toContain('COUNTERSIGN_SEAL_KEY is not set');
  });

  it('without a seal key the demo warns once, after the ready and sign-in lines, saying how to set the key; so does a restart on its database', async () => {
    const db = join(dir, 'countersign.db');
    delete process.env['COUNTERSIGN_SEAL_KEY'];
    /** The start-up lines in the order written: stdout as text, stderr as pino records. */
    const linesOf = (output: RunningServe['output']) =>
      output.flatMap(({ stream, text }) =>
        text
          .split('\n')
          .filter((line) => line !== '')
          .map((line) =>
            stream === 'stdout'
              ? { stream, line }
              : { stream, record: JSON.parse(line) as Record<string, unknown> },
          ),
      );
    for (const [start, lastDemoLine] of [
      ['first', 'demo: every demo login and token is in'],
      ['second', 'demo: the store was already seeded'],
    ] as const) {
      const server = await serve(['--demo', '--db', db, '--port', '0']);
      expect(await server.stop()).toBe(0);
      const lines = linesOf(server.output);
      const at = (predicate: (l: (typeof lines)[number]) => boolean) => lines.findIndex(predicate);
      const ready = at((l) => l.stream === 'stdout' && l.line?.startsWith('ready http://') === true);
      const lastDemo = at((l) => l.stream === 'stdout' && l.line?.startsWith(lastDemoLine) === true);
      const warnings = lines.filter((l) => l.record && (l.record['level'] as number) >= 40);
      expect({ start, warnings: warnings.map((w) => w.record) }).toEqual({
        start,
        warnings: [expect.objectContaining({ level: 40, sealed: false, msg: NO_SEAL_KEY_WARNING })],
      });
      const warning = lines.indexOf(warnings[0]!);
      expect(ready).toBeGreaterThanOrEqual(0);
      if (start === 'first')
        expect(at((l) => l.line?.startsWith('demo: sign in at') === true)).toBeGreaterThan(ready);
      expect(lastDemo).toBeGreaterThan(ready);
      expect(warning).toBeGreaterThan(lastDemo);
    }
    expect(NO_SEAL_KEY_WARNING).toContain(
      'To seal them, start with COUNTERSIGN_SEAL_KEY set to 32 or more random bytes (e.g. COUNTERSIGN_SEAL_KEY=$(openssl rand -hex 32))',
    );
  });

  it('the demo mix includes a proposal whose revalidation fails and one whose provider response is lost', async () => {
    const server = await serve(['--demo', '--db', join(dir, 'countersign.db'), '--port', '0']);
    try {
      const credentials = JSON.parse(
        readFileSync(join(dir, 'countersign-demo-credentials.json'), 'utf8'),
      ) as DemoCredentials;
      const token = credentials.tenants['globex']!.operatorToken;
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const items = (
        (await (
          await fetch(`${server.url}/api/v1/proposals?status=pending&operation=invoice.pay`, { headers })
        ).json()) as {
          items: { id: string; digest: string; resource: string; route: unknown }[];
        }
      ).items;
      const outcomeOf = async (resource: string) => {
        const p = items.find((i) => i.resource === resource)!;
        const r = await fetch(`${server.url}/api/v1/proposals/${p.id}/approve`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ seenDigest: p.digest }),
        });
        return ((await r.json()) as { outcome: { kind: string } }).outcome.kind;
      };
      // 12,500.00 USD needs two approvers: the first approval waits at "1 of 2", nothing runs.
      const big = items.find((i) => i.resource === 'invoice:inv-105')!;
      // Routing: payments over 1,000.00 go to the finance group (the two approvers); the admin,
      // outside it, is refused on the route's account.
      expect(big).toMatchObject({ route: { group: 'finance', channel: '#finance-approvals' } });
      const outside = await fetch(`${server.url}/api/v1/proposals/${big.id}/approve`, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${credentials.tenants['globex']!.adminToken}` },
        body: JSON.stringify({ seenDigest: big.digest }),
      });
      expect(outside.status).toBe(403);
      expect(await outside.json()).toMatchObject({ reason: 'forbidden' });
      const first = await fetch(`${server.url}/api/v1/proposals/${big.id}/approve`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ seenDigest: big.digest }),
      });
      expect(first.status).toBe(202);
      expect(await first.json()).toMatchObject({
        id: big.id,
        approvals: { required: 2, given: [{ by: 'user:approver@globex.test' }] },
      });
      const second = await fetch(`${server.url}/api/v1/proposals/${big.id}/approve`, {
        method: 'POST',
        headers: {
          ...headers,
          authorization: `Bearer ${credentials.tenants['globex']!.secondApproverToken}`,
        },
        body: JSON.stringify({ seenDigest: big.digest }),
      });
      expect(((await second.json()) as { outcome: { kind: string } }).outcome.kind).toBe('revision_required');
      expect(await outcomeOf('invoice:inv-106')).toBe('needs_reconciliation');
      expect(await outcomeOf('invoice:inv-104')).toBe('succeeded');
    } finally {
      await server.stop();
    }
  });

  it('gives each tenant an admin API token: it creates a grant over HTTP with Authorization: Bearer, an approver token is forbidden', async () => {
    const server = await serve(['--demo', '--db', join(dir, 'countersign.db'), '--port', '0']);
    try {
      const credentials = JSON.parse(
        readFileSync(join(dir, 'countersign-demo-credentials.json'), 'utf8'),
      ) as DemoCredentials;
      const acme = credentials.tenants['acme']!;
      expect(acme.adminToken).toMatch(/^cs_op_/);
      expect(server.stdout.join('')).toContain(`demo: acme admin API token`);
      expect(server.stdout.join('')).toContain(acme.adminToken);
      const grant = {
        subject: 'agent:acme-assistant',
        operations: ['invoice.pay'],
        resource: 'invoice:inv-107',
        constraints: { currency: { equals: 'USD' } },
        cap: { uses: 1 },
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      };
      const post = (token: string) =>
        fetch(`${server.url}/api/v1/grants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(grant),
        });
      const asApprover = await post(acme.operatorToken);
      expect(asApprover.status).toBe(403);
      expect(await asApprover.json()).toMatchObject({ reason: 'forbidden' });
      const created = await post(acme.adminToken);
      expect(created.status).toBe(201);
      expect(await created.json()).toMatchObject({
        subject: 'agent:acme-assistant',
        resource: 'invoice:inv-107',
        createdBy: 'user:admin@acme.test',
        state: 'live',
      });
      // Another tenant's admin token manages only its own grants.
      const globexList = await fetch(`${server.url}/api/v1/grants`, {
        headers: { authorization: `Bearer ${credentials.tenants['globex']!.adminToken}` },
      });
      expect(((await globexList.json()) as { items: unknown[] }).items).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it('keeps the tenants and logins of an already seeded store and writes no new credentials', async () => {
    const db = join(dir, 'countersign.db');
    const first = await serve(['--demo', '--db', db, '--port', '0']);
    await first.stop();
    const file = join(dir, 'countersign-demo-credentials.json');
    const credentials = JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials;
    rmSync(file);
    const second = await serve(['--demo', '--db', db, '--port', '0']);
    try {
      expect(second.stdout.join('')).toContain('demo: the store was already seeded');
      expect(existsSync(file)).toBe(false);
      const approver = credentials.tenants['acme']!.operators.find((o) => o.role === 'approver')!;
      expect((await new ConsoleClient(second.url).login(approver.email, approver.password)).status).toBe(303);
    } finally {
      await second.stop();
    }
  });
});

describe.skipIf(!TEST_PG_URL)('countersign serve --store (COUNTERSIGN_TEST_PG_URL)', () => {
  it('serves the demo from PostgreSQL; two servers on one database share logins', async () => {
    const url = new URL(TEST_PG_URL!);
    const schema = `cs_serve_${Date.now().toString(36)}`;
    url.searchParams.set('schema', schema);
    // A server store has no directory: the demo's journal goes to the working directory, said at the start.
    const before = process.cwd();
    process.chdir(dir);
    const first = await serve([
      '--demo',
      '--store',
      url.toString(),
      '--demo-credentials',
      join(dir, 'creds.json'),
      '--port',
      '0',
    ]);
    const second = await serve([
      '--demo',
      '--store',
      url.toString(),
      '--demo-credentials',
      join(dir, 'creds2.json'),
      '--port',
      '0',
    ]);
    try {
      expect(first.stdout.join('')).toContain(
        `demo: a PostgreSQL server store has no directory of its own: the demo's provider journal is in the working directory ${process.cwd()}\n`,
      );
      expect(second.stdout.join('')).toContain('demo: the store was already seeded');
      const credentials = JSON.parse(readFileSync(join(dir, 'creds.json'), 'utf8')) as DemoCredentials;
      const approver = credentials.tenants['acme']!.operators.find((o) => o.role === 'approver')!;
      const client = new ConsoleClient(first.url);
      expect((await client.login(approver.email, approver.password)).status).toBe(303);
      const other = new ConsoleClient(second.url);
      for (const [name, value] of client.cookies) other.cookies.set(name, value);
      expect((await other.get('/')).status).toBe(200);
    } finally {
      process.chdir(before);
      await first.stop();
      await second.stop();
      const admin = new pg.Client({ connectionString: TEST_PG_URL! });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });
});

describe('countersign serve --store pglite:', () => {
  it('serves the demo from a PGlite directory over real HTTP on loopback, answers /healthz, and stops', async () => {
    const data = join(dir, 'pg-data');
    const server = await serve([
      '--demo',
      '--store',
      `pglite:${data}`,
      '--demo-credentials',
      join(dir, 'creds.json'),
      '--port',
      '0',
    ]);
    let stopped = false;
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      expect(statSync(data).isDirectory()).toBe(true);
      expect(existsSync(join(dir, 'creds.json'))).toBe(true);
      expect(await server.stop()).toBe(0);
      stopped = true;
      expect(server.stdout.join('')).toMatch(/stopped\n$/);
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    } finally {
      if (!stopped) await server.stop();
    }
  });

  it('without --demo-credentials, keeps the demo credentials and provider journal beside the pglite: directory, not in the working directory', async () => {
    const cwd = tempDir();
    const before = process.cwd();
    process.chdir(cwd.dir);
    const data = join(dir, 'pg-data');
    let server: Awaited<ReturnType<typeof serve>> | undefined;
    try {
      server = await serve(['--demo', '--store', `pglite:${data}`, '--port', '0']);
      const credentialsFile = join(dir, 'countersign-demo-credentials.json');
      expect(server.stdout.join('')).toContain(`demo: every demo login and token is in ${credentialsFile}\n`);
      expect(server.stdout.join('')).not.toContain('no directory of its own');
      const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as DemoCredentials;
      const approver = credentials.tenants['acme']!.operators.find((o) => o.role === 'approver')!;
      expect(server.stdout.join('')).toContain(
        `demo: sign in at ${server.url}/login as ${approver.email} with password ${approver.password}\n`,
      );
      // The provider journals a payment once one runs: approve acme's payments.
      const headers = {
        authorization: `Bearer ${credentials.tenants['acme']!.operatorToken}`,
        'content-type': 'application/json',
      };
      const pending = (await (
        await fetch(`${server.url}/api/v1/proposals?status=pending&operation=invoice.pay`, { headers })
      ).json()) as { items: { id: string; digest: string }[] };
      for (const p of pending.items) {
        const approved = await fetch(`${server.url}/api/v1/proposals/${p.id}/approve`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ seenDigest: p.digest }),
        });
        expect([200, 202]).toContain(approved.status);
      }
      expect(readFileSync(join(dir, 'countersign-demo-provider.jsonl'), 'utf8')).not.toBe('');
      expect(readdirSync(cwd.dir)).toEqual([]);
    } finally {
      if (server) await server.stop();
      process.chdir(before);
      cwd.cleanup();
    }
  });

  it('refuses a store scheme it does not know, naming --store and the forms it takes, exit 2', async () => {
    for (const location of ['mysql://app:hunter2@db/countersign', 'sqlite:countersign.db']) {
      const errors: string[] = [];
      const io = { stdout: () => {}, stderr: (t: string) => errors.push(t), stdin: async () => '' };
      expect(await runCli(['serve', '--demo', '--store', location, '--port', '0'], io)).toBe(2);
      const scheme = location.slice(0, location.indexOf(':') + 1);
      expect(errors.join('').split('\n')[0]).toBe(
        `countersign serve: --store: "${scheme}" is not a store scheme; give postgres://… (or postgresql://…), pglite:DIR, pglite:memory: or a SQLite file path`,
      );
      expect(errors.join('')).not.toContain('hunter2');
    }
  });
});

describe('countersign serve --config', () => {
  it('serves the operations of an ES module config and runs its authentication setup', async () => {
    const config = join(dir, 'countersign.config.mjs');
    const src = pathToFileURL(join(process.cwd(), 'src/demo/demo-world.ts')).href;
    writeFileSync(
      config,
      `import { demoWorld, demoOperations } from ${JSON.stringify(src)};
export default {
  operations: demoOperations(demoWorld()),
  authentication: {
    async setup(directory) {
      await directory.ensureTenant('initech', 'Initech');
      await directory.addOperator({ tenant: 'initech', email: 'peter@initech.test', password: 'tps-report-cover-sheet', roles: ['approver'] });
    },
  },
};
`,
    );
    const server = await serve(['--config', config, '--db', join(dir, 'app.db'), '--port', '0']);
    try {
      expect(
        (await new ConsoleClient(server.url).login('peter@initech.test', 'tps-report-cover-sheet')).status,
      ).toBe(303);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // A server of one's own operations without COUNTERSIGN_SEAL_KEY says so too, once.
    const warned = server.stderr
      .join('')
      .split('\n')
      .filter((line) => line.includes(NO_SEAL_KEY_WARNING));
    expect(warned).toHaveLength(1);
    expect(JSON.parse(warned[0]!)).toMatchObject({ level: 40, sealed: false, msg: NO_SEAL_KEY_WARNING });
  });

  it('--mcp serves MCP over streamable HTTP at /mcp for agent tokens only', async () => {
    const db = join(dir, 'countersign.db');
    const server = await serve(['--demo', '--mcp', '--db', db, '--port', '0']);
    expect(server.stdout.join('')).toContain(`mcp ${server.url}/mcp`);
    const credentials = JSON.parse(
      readFileSync(join(dir, 'countersign-demo-credentials.json'), 'utf8'),
    ) as DemoCredentials;
    const initialize = (token?: string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-03-26',
            capabilities: {},
            clientInfo: { name: 'test', version: '1' },
          },
        }),
      });
    expect((await initialize()).status).toBe(401);
    expect((await initialize(credentials.tenants['acme']!.operatorToken)).status).toBe(403);
    const ok = await initialize(credentials.tenants['acme']!.agentToken);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toBeTruthy();
    await ok.body?.cancel();
    expect(await server.stop()).toBe(0);
  });

  it('refuses a store named both by --db/--store and by the config file, naming both, exit 2 (serve and mcp)', async () => {
    const examples = pathToFileURL(join(process.cwd(), 'src/demo/demo-world.ts')).href;
    const sqlite = pathToFileURL(join(process.cwd(), 'src/store/sqlite/index.ts')).href;
    // One module per run: an imported module (and the store it built) is cached, and each run closes its store.
    let runs = 0;
    const configWithStore = () => {
      const file = join(dir, `with-store-${++runs}.config.mjs`);
      writeFileSync(
        file,
        `import { demoWorld, demoOperations } from ${JSON.stringify(examples)};
import { SqliteStore } from ${JSON.stringify(sqlite)};
export default {
  operations: demoOperations(demoWorld()),
  store: new SqliteStore({ path: ${JSON.stringify(join(dir, `config-${runs}.db`))} }),
};
`,
      );
      return file;
    };
    const flagDb = join(dir, 'flag.db');
    const mcp = ['mcp', '--tenant', 'acme', '--agent-token', 'cs_agent_x'];
    const cases: [string[], string][] = [
      [['serve', '--config', configWithStore(), '--store', flagDb, '--port', '0'], 'serve: --store'],
      [['serve', '--config', configWithStore(), '--db', flagDb, '--port', '0'], 'serve: --db'],
      [[...mcp, '--config', configWithStore(), '--db', flagDb], 'mcp: --db'],
      [[...mcp, '--config', configWithStore(), '--store', flagDb], 'mcp: --store'],
    ];
    for (const [argv, named] of cases) {
      const errors: string[] = [];
      const io = { stdout: () => {}, stderr: (t: string) => errors.push(t), stdin: async () => '' };
      expect(await runCli(argv, io)).toBe(2);
      expect(errors.join('').split('\n')[0]).toBe(
        `countersign ${named} and the config file's store both name a store: give one`,
      );
      expect(existsSync(flagDb)).toBe(false);
    }
  });

  it('refuses bad usage with exit code 2', async () => {
    const io = { stdout: () => {}, stderr: (t: string) => errors.push(t), stdin: async () => '' };
    const errors: string[] = [];
    expect(await runCli(['serve', '--demo', '--config', 'x.mjs'], io)).toBe(2);
    expect(await runCli(['serve', '--db', 'a.db', '--store', 'postgres://x@y/z'], io)).toBe(2);
    expect(await runCli(['serve', '--port', 'eighty'], io)).toBe(2);
    expect(await runCli(['serve', '--db', join(dir, 'x.db')], io)).toBe(2);
    expect(await runCli(['serve', '--config', join(dir, 'missing.mjs')], io)).toBe(2);
    expect(errors.join('')).toContain('nothing to serve');
  });
});

describe('countersign serve against a store that is not there yet', () => {
  it('waits with one line naming the store and the cause (no stack, password hidden), and stops on SIGTERM', async () => {
    const out: string[] = [];
    const errors: string[] = [];
    const stop = new AbortController();
    const io = {
      stdout: (t: string) => out.push(t),
      stderr: (t: string) => {
        errors.push(t);
        stop.abort();
      },
      stdin: async () => '',
      signal: stop.signal,
    };
    const code = await runCli(
      ['serve', '--demo', '--store', 'postgres://app:hunter2@127.0.0.1:1/db', '--port', '0'],
      io,
    );
    expect(code).toBe(0);
    expect(errors).toEqual([
      'countersign serve: the store postgres://app:***@127.0.0.1:1/db is unavailable (unreachable: the database cannot be reached (ECONNREFUSED); the step it was taking was rolled back; try again shortly); trying again with backoff until it answers\n',
    ]);
    expect(out.join('')).toBe('stopped\n');
  });
});
