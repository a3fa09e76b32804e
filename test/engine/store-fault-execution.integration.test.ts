import { createRequire } from 'node:module';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { createEngine, type Engine, StoreFaultError } from '../../src/index.js';
import { type FaultHook, withFaults } from '../../src/engine/faults.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { TEST_PG_URL, testPostgres } from '../support/postgres.js';
import { approveSettled, ManualClock, proposeDraft, proposePayment, tempDir } from '../support/engine.js';

// Another process on the same SQLite file, holding its write lock at a chosen fault point.
type Connection = { exec(sql: string): unknown; close(): unknown };
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Connection;

const LEASE = 60_000;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function lockedAt(point: Parameters<FaultHook>[0]) {
  const { dir, cleanup } = tempDir();
  const path = join(dir, 'fault.db');
  const other = new Database(path);
  let held = false;
  const hold = () => {
    if (held) return;
    other.exec('BEGIN IMMEDIATE');
    held = true;
  };
  const release = () => {
    if (!held) return;
    other.exec('ROLLBACK');
    held = false;
  };
  let armed = true;
  const faults: FaultHook = (at) => {
    if (armed && at === point) {
      armed = false;
      hold();
    }
  };
  const clock = new ManualClock();
  const world = demoWorld();
  const store = new SqliteStore({ path, busyTimeoutMs: 20 });
  const engine: Engine = await createEngine(
    withFaults({ store, operations: demoOperations(world), clock, leaseMs: LEASE }, faults),
  );
  cleanups.push(
    cleanup,
    () => void other.close(),
    () => engine.close(),
    release,
  );
  return { engine, clock, world, release };
}

describe('a store that fails while an approved proposal executes', () => {
  it('leaves a local effect rolled back and executing, and recovery finishes it after the lease: never a terminal failure', async () => {
    const { engine, clock, release } = await lockedAt('after_claim');
    const draft = await proposeDraft(engine);
    const failed = await approveSettled(engine, draft);
    expect(failed).toBeInstanceOf(StoreFaultError);
    expect(failed).toMatchObject({ condition: 'busy' });
    expect((await engine.proposals.get('acme', draft.id))?.status).toBe('executing');
    release();
    clock.advance(LEASE + 1);
    const sweep = await engine.sweeps.recover();
    expect(sweep).toMatchObject({ examined: 1, rerun: 1, parked: 0 });
    expect((await engine.proposals.get('acme', draft.id))?.status).toBe('succeeded');
  });

  it('keeps an external payment whose command could not be recorded from failing: recovery re-runs it and pays once', async () => {
    const { engine, clock, world, release } = await lockedAt('after_revalidation');
    const payment = await proposePayment(engine);
    const failed = await approveSettled(engine, payment);
    expect(failed).toBeInstanceOf(StoreFaultError);
    expect(world.provider.calls).toBe(0);
    expect((await engine.proposals.get('acme', payment.id))?.status).toBe('executing');
    release();
    clock.advance(LEASE + 1);
    expect(await engine.sweeps.recover()).toMatchObject({ examined: 1, rerun: 1 });
    expect((await engine.proposals.get('acme', payment.id))?.status).toBe('succeeded');
    expect(world.provider.calls).toBe(1);
  });
});

// A connection that dies inside the local effect's transaction, after the proposal was read:
// the store answers the next statement with a fault while a fresh connection would work at once.
describe.skipIf(!TEST_PG_URL)(
  'a PostgreSQL backend terminated inside a local effect (COUNTERSIGN_TEST_PG_URL)',
  () => {
    const backend = testPostgres();
    afterAll(() => backend.cleanup());

    it('rolls the effect back and leaves it executing for recovery, where it used to record a terminal failure', async () => {
      const schema = backend.newSchema();
      const admin = new pg.Client({ connectionString: TEST_PG_URL });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const pool = new pg.Pool({
        connectionString: TEST_PG_URL,
        options: `-c search_path=${schema}`,
        max: 4,
      });
      pool.on('error', () => {});
      const pids = new Set<number>();
      pool.on('acquire', (client) => pids.add((client as unknown as { processID: number }).processID));
      cleanups.push(
        () => admin.end(),
        () => pool.end(),
      );
      let armed = true;
      const faults: FaultHook = async (at) => {
        if (!armed || at !== 'before_outcome_commit') return;
        armed = false;
        await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [[...pids]]);
        // The pool drops an idle client once its socket reports the termination; until then it may
        // hand that dead client to the next read, which is a different fault from the one tested.
        await new Promise<void>((resolve) => {
          const check = () => {
            if (pool.idleCount > 0) return;
            pool.off('remove', check);
            resolve();
          };
          pool.on('remove', check);
          check();
        });
      };
      const clock = new ManualClock();
      const store = new PostgresStore({ pool });
      const engine = await createEngine(
        withFaults({ store, operations: demoOperations(demoWorld()), clock, leaseMs: LEASE }, faults),
      );
      cleanups.push(() => engine.close());
      const draft = await proposeDraft(engine);
      const failed = await approveSettled(engine, draft);
      expect(failed).toBeInstanceOf(StoreFaultError);
      expect((await engine.proposals.get('acme', draft.id))?.status).toBe('executing');
      clock.advance(LEASE + 1);
      expect(await engine.sweeps.recover()).toMatchObject({ examined: 1, rerun: 1, parked: 0 });
      expect((await engine.proposals.get('acme', draft.id))?.status).toBe('succeeded');
    });
  },
);
