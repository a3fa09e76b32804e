import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation } from '../../src/index.js';
import { readiness } from '../../src/server/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/engine.js';
import { ConsoleClient, hidden } from './support/console-client.js';
import { call, freshInvoice, type ServerHarness, serverHarness } from './support/server-harness.js';

// A second connection to the same SQLite file: another process holding the write lock.
type Connection = { exec(sql: string): unknown; close(): unknown };
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Connection;

// An operation whose preparation waits until the test lets it go: a request that outlives the
// deadline (what a database answering each statement just under its timeout looks like).
let releaseSlow: () => void = () => {};
let slowStarted: () => void = () => {};
const slow = defineOperation({
  kind: 'test.slow',
  scopeVersion: 1,
  scope: z.strictObject({ tenant: z.string(), operation: z.literal('test.slow'), n: z.number() }),
  request: z.strictObject({ n: z.number() }),
  arguments: z.strictObject({ n: z.number() }),
  prepare: async ({ n }) => {
    slowStarted();
    await new Promise<void>((resolve) => (releaseSlow = resolve));
    return { arguments: { n }, preview: { n } };
  },
  execute: async () => ({ kind: 'succeeded', result: {} }),
});

const files = tempDir();
const path = join(files.dir, 'server.db');
let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({
    store: new SqliteStore({ path, busyTimeoutMs: 50 }),
    extraOperations: [slow],
    requestDeadlineMs: 300,
  });
});
afterAll(async () => {
  await h.close();
  files.cleanup();
});

const pay = (invoice: string) => ({
  operation: 'invoice.pay',
  request: { invoice_id: invoice },
  resource: `invoice:${invoice}`,
  runId: 'run-store-unavailable',
});

describe('a store that cannot write for a while', () => {
  it('answers a write 503 store_unavailable with Retry-After while another process holds the lock, then resumes by itself', async () => {
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const refused = await call(h, 'POST', '/api/v1/proposals', {
        token: h.tenants.acme.agentToken,
        body: pay(freshInvoice(h.world, 'acme')),
      });
      expect(refused.status).toBe(503);
      expect(refused.body['reason']).toBe('store_unavailable');
      expect(refused.body['message']).toMatch(/busy \(SQLITE_BUSY\); the step it was taking was rolled back/);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body['correlationId']).toBeUndefined();
      // Liveness never asks the store; readiness does, and WAL reads go on beside the writer.
      expect((await call(h, 'GET', '/healthz')).status).toBe(200);
      expect((await call(h, 'GET', '/readyz')).status).toBe(200);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    const accepted = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: pay(freshInvoice(h.world, 'acme')),
    });
    expect(accepted.status).toBe(201);
    const warned = h.logs.filter((line) => line.message === 'store unavailable');
    expect(warned.length).toBeGreaterThan(0);
    expect(warned[0]!.fields).toMatchObject({ condition: 'busy', path: '/api/v1/proposals' });
    expect(h.logs.some((line) => line.level === 'error')).toBe(false);
  });

  it('shows an operator signing in the console’s error page with the reason, 503 and Retry-After', async () => {
    const client = new ConsoleClient(h.url);
    const form = await client.get('/login');
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const { operators } = h.tenants.acme;
      const signIn = await client.post('/login', {
        csrf: hidden(form.html, 'csrf'),
        email: operators.approver.email,
        password: operators.approver.password,
      });
      expect(signIn.status).toBe(503);
      expect(signIn.response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(signIn.response.headers.get('retry-after')).toBe('1');
      expect(signIn.html).toContain('store_unavailable');
      expect(signIn.html).not.toMatch(/countersign_|SELECT|INSERT/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });

  it('answers a request past its deadline 503 store_unavailable, saying it may still complete', async () => {
    const started = new Promise<void>((resolve) => (slowStarted = resolve));
    const answer = call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: { operation: 'test.slow', request: { n: 1 }, resource: 'slow:1', runId: 'run-deadline' },
    });
    const first = await Promise.race([started.then(() => 'started'), answer]);
    expect(first).toBe('started');
    const refused = await answer;
    releaseSlow();
    expect(refused.status).toBe(503);
    expect(refused.body['reason']).toBe('store_unavailable');
    expect(refused.body['message']).toMatch(/did not finish within 300 ms.*may still complete/);
    expect(refused.headers.get('retry-after')).toBe('5');
  });
});

describe('GET /healthz and GET /readyz', () => {
  it('names no tenant and needs no token', async () => {
    const health = await call(h, 'GET', '/healthz');
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await call(h, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { store: { ok: true } } });
    expect(ready.headers.get('cache-control')).toBe('no-store');
  });

  it('reports a closed store and a stopped worker as not ready, each by name', async () => {
    const dir = tempDir();
    const store = new SqliteStore({ path: join(dir.dir, 'r.db') });
    await store.migrate();
    let sweeping = true;
    const check = readiness({ store, workers: { sweeps: () => sweeping } });
    expect(await check()).toEqual({ status: 'ready', checks: { store: { ok: true }, sweeps: { ok: true } } });
    sweeping = false;
    await store.close();
    expect(await check()).toEqual({
      status: 'not_ready',
      checks: {
        store: { ok: false, detail: 'the store failed a read (StoreClosedError)' },
        sweeps: { ok: false, detail: 'sweeps is not running' },
      },
    });
    dir.cleanup();
  });

  it('makes one store statement for concurrent readiness probes, however many arrive at once', async () => {
    let probes = 0;
    let answer: () => void = () => {};
    const slowStore = {
      health: () => {
        probes++;
        return new Promise<{ pendingMigrations: number }>((resolve) => {
          answer = () => resolve({ pendingMigrations: 0 });
        });
      },
    } as unknown as Store;
    const check = readiness({ store: slowStore });
    const reports = Array.from({ length: 50 }, () => check());
    answer();
    for (const report of await Promise.all(reports)) expect(report.status).toBe('ready');
    expect(probes).toBe(1);
    // The next probe after it answered asks the store again: the report is never stale.
    const next = check();
    answer();
    expect((await next).status).toBe('ready');
    expect(probes).toBe(2);
  });

  it('reports pending migrations, and answers within its deadline when the store hangs', async () => {
    const dir = tempDir();
    const store = new SqliteStore({ path: join(dir.dir, 'fresh.db') });
    const fresh = await readiness({ store })();
    expect(fresh.checks['store']).toMatchObject({ ok: false, detail: expect.stringMatching(/migration/) });
    await store.close();
    dir.cleanup();
    // A database that never answers (a paused server): only its promise is needed here.
    const hanging = { health: () => new Promise<never>(() => {}) } as unknown as Store;
    const report = await readiness({ store: hanging, timeoutMs: 20 })();
    expect(report).toEqual({
      status: 'not_ready',
      checks: { store: { ok: false, detail: 'the store did not answer within 20 ms' } },
    });
  });
});
