import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DRAFTS_TABLE, type DemoWorld, demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import {
  type Actor,
  type AnyOperation,
  createEngine,
  type Engine,
  type EngineOptions,
} from '../../src/index.js';
import { type FaultHook, type FaultPoint, withFaults } from '../../src/engine/faults.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { type BackendName, storeOn } from './backends.js';

/** A clock the test moves by hand. */
export class ManualClock {
  constructor(public time = Date.UTC(2026, 10, 29, 12, 0, 0)) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

export const agent = (tenant = 'acme'): Actor => ({
  id: `agent:${tenant}-assistant`,
  tenant,
  kind: 'agent',
  roles: [],
});
export const approver = (tenant = 'acme', name = 'ada'): Actor => ({
  id: `user:${name}@${tenant}.test`,
  tenant,
  kind: 'operator',
  roles: ['approver'],
});
export const viewer = (tenant = 'acme'): Actor => ({
  id: `user:viewer@${tenant}.test`,
  tenant,
  kind: 'operator',
  roles: ['viewer'],
});

/** A temporary directory removed by `cleanup`. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Harness<S extends Store = SqliteStore> {
  readonly engine: Engine;
  readonly world: DemoWorld;
  readonly clock: ManualClock;
  readonly store: S;
  readonly dbPath: string;
  close(): Promise<void>;
}

type HarnessOptions = Partial<EngineOptions> & { world?: DemoWorld; faults?: FaultHook };

/** An engine on a real SQLite file in a temp dir, with the demo operations and a manual clock. */
export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const { dir, cleanup } = tempDir();
  const dbPath = join(dir, 'test.db');
  return engineOn(new SqliteStore({ path: dbPath }), dbPath, async () => cleanup(), options);
}

/** The demo engine on `store`; `dispose` runs after the engine closes. */
async function engineOn<S extends Store>(
  store: S,
  dbPath: string,
  dispose: () => Promise<void>,
  options: HarnessOptions,
): Promise<Harness<S>> {
  const clock = new ManualClock();
  const world = options.world ?? demoWorld();
  const { faults, world: _world, ...engineOptions } = options;
  const engine = await createEngine(
    withFaults({ store, operations: demoOperations(world), clock, ...engineOptions }, faults),
  );
  return {
    engine,
    world,
    clock,
    store,
    dbPath,
    close: async () => {
      await engine.close();
      await dispose();
    },
  };
}

/**
 * {@link harness} on a backend: SQLite as there, or a PostgreSQL store in a schema of its own
 * (dropped on close; the file's embedded database is shared by its harnesses). Its `dbPath` is
 * the SQLite file's, and names nothing on PostgreSQL.
 */
export async function harnessOn(backend: BackendName, options: HarnessOptions = {}): Promise<Harness<Store>> {
  if (backend === 'sqlite') return harness(options);
  const { store, dispose } = await storeOn(backend);
  return engineOn(store, '', dispose, options);
}

/** The demo email drafts applied in a store (the local effect's own table), on any backend. */
export function draftRows(store: Store): Promise<readonly Record<string, unknown>[]> {
  return store.transaction((tx) => tx.local.all(`SELECT * FROM ${DRAFTS_TABLE} ORDER BY proposal_id`));
}

/** Proposes the note's 240.49 USD invoice payment for a tenant. */
export async function proposePayment(engine: Engine, tenant = 'acme', invoice = 'inv-104', runId = 'run-1') {
  const result = await engine.proposals.propose({
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    tenant,
    resource: `invoice:${invoice}`,
    requestedBy: agent(tenant).id,
    runId,
  });
  if (result.kind !== 'proposed')
    throw new Error(`expected proposed, got ${result.kind}: ${result.modelMessage}`);
  return result.proposal;
}

/** Proposes the demo email draft for acme (a local effect). */
export async function proposeDraft(engine: Engine, subject = 'Season opens') {
  const r = await engine.proposals.propose({
    operation: 'email_broadcast.apply_draft',
    request: { broadcast_id: 'bc-spring', subject, body: 'See you Saturday.' },
    tenant: 'acme',
    resource: 'broadcast:bc-spring',
    requestedBy: agent().id,
    runId: 'run-1',
  });
  if (r.kind !== 'proposed') throw new Error(r.modelMessage);
  return r.proposal;
}

/** Approves a proposal as the acme approver and returns the claimed contract (throws otherwise). */
export async function claimProposal(engine: Engine, proposal: { id: string; digest: string }) {
  const claimed = await engine.proposals.approve({
    tenant: 'acme',
    proposalId: proposal.id,
    approver: approver(),
    seenDigest: proposal.digest,
  });
  if (claimed.kind !== 'claimed') throw new Error(`expected claimed, got ${claimed.kind}`);
  return claimed.contract;
}

/**
 * A fault hook that parks the worker at one point, the first time it gets there (a crash, as far
 * as the store can tell), until released: `reached` resolves when it is parked.
 */
export function stallAt(point: FaultPoint) {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reached: () => void = () => {};
  const reachedPromise = new Promise<void>((resolve) => {
    reached = resolve;
  });
  let armed = true;
  return {
    hook: async (p: FaultPoint) => {
      if (p === point && armed) {
        armed = false;
        reached();
        await released;
      }
    },
    reached: reachedPromise,
    release: () => release(),
  };
}

/**
 * The demo operations with the payments' provider declared as not deduplicating: a stopped
 * attempt that recorded its command then goes to `needs_reconciliation`, as any provider's would.
 */
export function undeclaredOperations(world: DemoWorld): AnyOperation[] {
  return demoOperations(world).map((op) =>
    op.effect === 'external' ? { ...op, provider: { deduplicates: 'none' as const } } : op,
  );
}

/**
 * Approves and executes `proposal` as its tenant's approver; resolves to the result, or to the
 * error it threw (a store fault, a handed-back attempt), so a test can assert either.
 */
export function approveSettled(
  engine: Engine,
  proposal: { readonly id: string; readonly digest: string },
  tenant = 'acme',
): Promise<unknown> {
  return engine.proposals
    .approveAndExecute({
      tenant,
      proposalId: proposal.id,
      approver: approver(tenant),
      seenDigest: proposal.digest,
    })
    .then(
      (result) => result,
      (error: unknown) => error,
    );
}
