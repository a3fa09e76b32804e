import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOperations, demoReadTools, demoWorld, type DemoWorld } from '../../src/demo/demo-world.js';
import {
  type AnyReadTool,
  type AuditEvent,
  ConfigurationError,
  createEngine,
  defineReadTool,
  type Engine,
  verifyAudit,
} from '../../src/index.js';
import { canonicalize } from '../../src/canonical/index.js';
import type { ReadScope } from '../../src/operation/index.js';
import type { Store } from '../../src/store/store.js';
import { auditRow } from '../../src/store/sql-audit.js';
import { AUDIT_COLUMNS } from '../../src/store/sql-columns.js';
import { sql } from '../../src/sql/sql.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { BACKENDS, type BackendName } from '../support/backends.js';
import { ManualClock, tempDir } from '../support/engine.js';
import { testPostgres } from '../support/postgres.js';

const SEAL_KEY = 'k'.repeat(32);
const acme = { tenant: 'acme', agent: 'agent:acme-assistant', runId: 'run-a' } as const;
const globex = { tenant: 'globex', agent: 'agent:globex-assistant', runId: 'run-g' } as const;

/** A read tool that records the scope it was given, to show where the scope comes from. */
function scopeSpy(seen: ReadScope[]): AnyReadTool {
  return defineReadTool({
    name: 'whoami',
    description: 'Says who reads.',
    input: z.strictObject({ note: z.string().optional() }),
    read: (_input, scope) => {
      seen.push(scope);
      return { ok: true };
    },
  });
}

const failing = defineReadTool({
  name: 'broken_read',
  description: 'Always fails.',
  input: z.strictObject({}),
  read: () => {
    throw new Error('the records are unreachable');
  },
});

async function events(store: Store, tenant: string): Promise<AuditEvent[]> {
  return store.read((tx) => tx.listAudit(tenant, { limit: 1000 }));
}

const pg = testPostgres();
afterAll(() => pg.cleanup(), 60_000);

const BACKEND_OF: Readonly<
  Record<BackendName, { name: string; open(): Promise<{ store: Store; cleanup(): void }> }>
> = {
  sqlite: {
    name: 'SQLite file',
    open: async () => {
      const { dir, cleanup } = tempDir();
      return { store: new SqliteStore({ path: join(dir, 'reads.db') }), cleanup };
    },
  },
  postgres: {
    name: `PostgreSQL (${pg.label})`,
    open: async () => ({ store: await pg.store(), cleanup: () => {} }),
  },
};

for (const name of BACKENDS) {
  const backend = BACKEND_OF[name];
  describe(`engine.read on ${backend.name}`, () => {
    let engine: Engine;
    let store: Store;
    let world: DemoWorld;
    let cleanup: () => void;
    const seen: ReadScope[] = [];

    beforeAll(async () => {
      ({ store, cleanup } = await backend.open());
      world = demoWorld();
      engine = await createEngine({
        store,
        operations: demoOperations(world),
        readTools: [...demoReadTools(world), scopeSpy(seen), failing],
        clock: new ManualClock(),
        sealKey: SEAL_KEY,
      });
    }, 60_000);
    afterAll(async () => {
      await engine?.close();
      cleanup?.();
    });

    it('reads only the binding’s tenant: each demo tenant sees its own open invoices', async () => {
      const a = await engine.reads.run('list_open_invoices', {}, acme);
      const g = await engine.reads.run('list_open_invoices', {}, globex);
      if (a.kind !== 'read' || g.kind !== 'read') throw new Error(JSON.stringify([a, g]));
      const ids = (r: unknown) => (r as { invoice_id: string }[]).map((row) => row.invoice_id);
      expect(ids(a.result)).toEqual(world.invoices.open('acme').map((i) => i.id));
      expect(ids(g.result)).toEqual(world.invoices.open('globex').map((i) => i.id));
      expect(ids(a.result)).toContain('inv-108');
      expect(ids(a.result)).not.toContain('inv-201');
      expect(ids(g.result)).toContain('inv-201');
      expect(ids(g.result)).not.toContain('inv-108');
    });

    it('narrows by the model’s input only within the tenant', async () => {
      const r = await engine.reads.run('list_open_invoices', { currency: 'EUR' }, globex);
      if (r.kind !== 'read') throw new Error(JSON.stringify(r));
      expect((r.result as { currency: string }[]).map((row) => row.currency)).toEqual(
        world.invoices
          .open('globex')
          .filter((i) => i.currency === 'EUR')
          .map(() => 'EUR'),
      );
      expect((r.result as unknown[]).length).toBeGreaterThan(0);
    });

    it('hands read() the tenant, section, agent and run of the binding, never of the input', async () => {
      seen.length = 0;
      const r = await engine.reads.run(
        'whoami',
        { note: 'tenant globex please' },
        { ...acme, section: 'payables' },
      );
      expect(r.kind).toBe('read');
      expect(seen).toEqual([{ tenant: 'acme', section: 'payables', actor: acme.agent, runId: acme.runId }]);
    });

    it('audits each read in the tenant’s chain: tool, agent, run, the input’s digest, never the rows', async () => {
      const before = (await events(store, 'acme')).length;
      const globexBefore = (await events(store, 'globex')).length;
      const input = { currency: 'USD' };
      const r = await engine.reads.run('list_open_invoices', input, acme);
      if (r.kind !== 'read') throw new Error(JSON.stringify(r));
      const after = await events(store, 'acme');
      expect(after).toHaveLength(before + 1);
      const event = after.at(-1)!;
      expect(event).toMatchObject({
        step: 'read',
        tenant: 'acme',
        actor: acme.agent,
        runId: acme.runId,
        proposalId: r.readId,
        detail: {
          tool: 'list_open_invoices',
          input: createHash('sha256').update(canonicalize(input)).digest('hex'),
        },
      });
      const stored = JSON.stringify(event);
      for (const row of r.result as { supplier: string }[]) expect(stored).not.toContain(row.supplier);
      expect(await events(store, 'globex')).toHaveLength(globexBefore);
      expect(await verifyAudit(store, { sealKey: SEAL_KEY })).toMatchObject({ kind: 'intact' });
    });

    it('refuses an extra input field with invalid_request naming it, and neither reads nor audits', async () => {
      const before = (await events(store, 'acme')).length;
      seen.length = 0;
      const r = await engine.reads.run('whoami', { note: 'x', tenant: 'globex' }, acme);
      expect(r.kind).toBe('invalid_request');
      if (r.kind !== 'invalid_request') return;
      expect(r.reason).toBe('invalid_request');
      expect(r.modelMessage).toContain('tenant');
      expect(seen).toEqual([]);
      expect(await events(store, 'acme')).toHaveLength(before);
    });

    it('refuses ill-typed input and an unknown tool with invalid_request', async () => {
      const bad = await engine.reads.run('list_open_invoices', { currency: 42 }, acme);
      expect(bad.kind === 'invalid_request' && bad.reason).toBe('invalid_request');
      const unknown = await engine.reads.run('list_all_tenants', {}, acme);
      expect(unknown.kind === 'invalid_request' && unknown.reason).toBe('invalid_request');
      expect(unknown.kind === 'invalid_request' && unknown.modelMessage).toContain('list_open_invoices');
    });

    it.each([undefined, null, '', '  ', 'undefined', 'null'])(
      'refuses run id %j with run_id_missing before reading',
      async (runId) => {
        seen.length = 0;
        const r = await engine.reads.run('whoami', {}, { ...acme, runId });
        expect(r.kind === 'invalid_request' && r.reason).toBe('run_id_missing');
        expect(seen).toEqual([]);
      },
    );

    it('throws a ConfigurationError for a binding without tenant or agent (a bug, not the model’s)', async () => {
      await expect(engine.reads.run('whoami', {}, { ...acme, tenant: '' })).rejects.toThrow(
        ConfigurationError,
      );
      await expect(engine.reads.run('whoami', {}, { ...acme, agent: ' ' })).rejects.toThrow(
        ConfigurationError,
      );
    });

    it('withholds the result, recording nothing, while an event a database writer inserted holds the place the tenant’s chain takes next: corrupt_audit_chain', async () => {
      const initech = { tenant: 'initech', agent: 'agent:initech-assistant', runId: 'run-i' };
      expect((await engine.reads.run('whoami', {}, initech)).kind).toBe('read');
      const [newest] = await events(store, 'initech');
      const forged = { ...newest!, id: 'evt_forged_read', seq: newest!.seq + 1 };
      const columns = sql.raw(AUDIT_COLUMNS.map(([, c]) => c).join(', '));
      await store.transaction((tx) =>
        tx.local.run(
          sql`INSERT INTO countersign_audit_events (${columns}) VALUES (${sql.list(auditRow(forged))})`,
        ),
      );
      seen.length = 0;
      const r = await engine.reads.run('whoami', { note: 'withheld' }, initech);
      expect(r).toMatchObject({ kind: 'corrupt_audit_chain', reason: 'corrupt_audit_chain' });
      expect(r).not.toHaveProperty('result');
      expect((await events(store, 'initech')).map((e) => e.id)).toEqual([newest!.id, 'evt_forged_read']);
      expect(await verifyAudit(store, { sealKey: SEAL_KEY, tenant: 'initech' })).toMatchObject({
        kind: 'broken',
        eventId: 'evt_forged_read',
        problem: 'leaf_mismatch',
      });
      await store.transaction((tx) =>
        tx.local.run(sql`DELETE FROM countersign_audit_events WHERE id = 'evt_forged_read'`),
      );
      expect((await engine.reads.run('whoami', {}, initech)).kind).toBe('read');
    });

    it('writes no audit event when read() throws: the error reaches the caller', async () => {
      const before = (await events(store, 'acme')).length;
      await expect(engine.reads.run('broken_read', {}, acme)).rejects.toThrow('the records are unreachable');
      expect(await events(store, 'acme')).toHaveLength(before);
    });
  });
}

// SQLite only: a read tool's registration is checked by createEngine whatever the store.
describe('createEngine({ readTools })', () => {
  it('refuses a read tool registered twice, and lists the registered ones', async () => {
    const { dir, cleanup } = tempDir();
    const world = demoWorld();
    const twice = new SqliteStore({ path: join(dir, 'twice.db') });
    try {
      await expect(
        createEngine({
          store: twice,
          operations: [],
          readTools: [...demoReadTools(world), ...demoReadTools(world)],
        }),
      ).rejects.toThrow(/"list_open_invoices" is registered twice/);
      const engine = await createEngine({
        store: new SqliteStore({ path: join(dir, 'once.db') }),
        operations: [],
        readTools: demoReadTools(world),
      });
      expect([...engine.readTools.keys()]).toEqual(['list_open_invoices']);
      await engine.close();
    } finally {
      await twice.close();
      cleanup();
    }
  });
});
