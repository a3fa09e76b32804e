import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { createEngine, type Engine } from '../../src/index.js';
import { notificationOutbox } from '../../src/notify/outbox-writer.js';
import { openStore } from '../../src/store/open-store.js';
import { outboxOf } from '../../src/store/sql-outbox.js';
import type { Store } from '../../src/store/store.js';
import { approver, proposePayment, tempDir } from '../support/engine.js';
import { PROCESS_BACKENDS } from '../support/backends.js';
import { TEST_PG_URL } from '../support/postgres.js';
import { startReceiver } from './support/receiver.js';

const WORKER = 'test/notify/support/dispatch-worker.ts';
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const temp = tempDir();
const schemas: string[] = [];
afterAll(async () => {
  temp.cleanup();
  if (TEST_PG_URL && schemas.length > 0) {
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: TEST_PG_URL });
    await client.connect();
    for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await client.end();
  }
});

function location(backend: 'sqlite' | 'postgres'): string {
  if (backend === 'sqlite') return join(temp.dir, `kill-${randomBytes(4).toString('hex')}.db`);
  const schema = `cs_notify_kill_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  const url = new URL(TEST_PG_URL!);
  url.searchParams.set('schema', schema);
  return url.toString();
}

function startWorker(store: string, url: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', WORKER, '--store', store, '--url', url, '--secret', SECRET],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let errors = '';
  child.stderr?.on('data', (d: Buffer) => {
    errors += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('dispatching')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`dispatch worker exited ${code}: ${errors}`)));
  });
}

async function makeEvents(engine: Engine, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const tenant = i % 2 === 0 ? 'acme' : 'globex';
    const p = await proposePayment(engine, tenant, 'inv-104', `run-${i}-${randomBytes(3).toString('hex')}`);
    // Every third proposal is declined too: a decided event.
    if (i % 3 === 0)
      await engine.proposals.decline({
        tenant,
        proposalId: p.id,
        actor: approver(tenant),
        reason: 'not now',
      });
  }
}

async function outboxRows(store: Store) {
  return store.transaction(async (tx) => {
    const outbox = outboxOf(tx, store.capabilities);
    return [
      ...(await outbox.list('acme', { limit: 1000 })),
      ...(await outbox.list('globex', { limit: 1000 })),
    ];
  });
}

// Dispatchers run in child processes: PostgreSQL needs a server they can reach (the embedded PGlite
// lives in this process only). Without one its run is reported as skipped, with the reason the
// reliability suites give.
for (const { name: backend, skip } of PROCESS_BACKENDS) {
  describe.skipIf(skip !== undefined)(
    `a dispatcher killed mid-delivery (${backend})${skip ? ` (skipped: ${skip})` : ''}`,
    () => {
      it('another one delivers what it was delivering: nothing is lost, duplicates keep their webhook-id', async () => {
        const where = location(backend);
        const store = await openStore(where);
        const operations = demoOperations(demoWorld());
        const engine = await createEngine({
          store,
          operations,
          stepWriters: [notificationOutbox({ channels: ['webhook'], operations })],
        });
        const receiver = await startReceiver();
        let second: ChildProcess | undefined;
        try {
          await makeEvents(engine, 8);
          // The first dispatcher gets three answers, then the receiver holds every request open.
          receiver.script([204, 204, 204], 'hold');
          const first = await startWorker(where, receiver.url);
          await receiver.waitFor(5);
          first.kill('SIGKILL');
          await new Promise((resolve) => first.once('exit', resolve));
          const heldWhenKilled = receiver.received.filter((r) => r.reply === 'hold').length;
          // Events keep coming while no dispatcher runs.
          await makeEvents(engine, 4);
          receiver.script([], 204);
          second = await startWorker(where, receiver.url);
          const deadline = Date.now() + 30_000;
          let rows = await outboxRows(store);
          while (rows.some((r) => r.status !== 'delivered') && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 100));
            rows = await outboxRows(store);
          }
          const written = new Set(rows.map((r) => r.eventId));
          const answered = new Set(
            receiver.received
              .filter((r) => typeof r.reply === 'number' && r.reply < 300)
              .map((r) => r.headers['webhook-id']),
          );
          const seen = receiver.received.map((r) => r.headers['webhook-id']);
          const figures = {
            backend,
            eventsWritten: written.size,
            delivered: rows.filter((r) => r.status === 'delivered').length,
            requestsSeen: seen.length,
            heldWhenKilled,
            duplicatesSeen: seen.length - new Set(seen).size,
            lost: [...written].filter((id) => !answered.has(id)).length,
          };
          // The figures the closing note quotes (console output fails a run: written to stderr directly).
          process.stderr.write(`notification kill test: ${JSON.stringify(figures)}\n`);
          expect(figures.lost).toBe(0);
          expect(figures.delivered).toBe(figures.eventsWritten);
          expect(heldWhenKilled).toBeGreaterThan(0);
          // What the killed dispatcher held was sent again, under the same id.
          expect(figures.duplicatesSeen).toBeGreaterThanOrEqual(heldWhenKilled);
          for (const r of receiver.received)
            expect(() => new Webhook(SECRET).verify(r.body, r.headers)).not.toThrow();
        } finally {
          second?.kill('SIGKILL');
          await receiver.close();
          await engine.close();
        }
      }, 90_000);
    },
  );
}
