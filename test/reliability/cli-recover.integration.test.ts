import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { createEngine, defineOperation, type Engine, type Store } from '../../src/index.js';
import {
  PROCESS_BACKENDS,
  type Backend,
  type BackendName,
  createBackend,
  scratchDir,
} from '../support/backends.js';
import { runWorker, sleep } from './support/children.js';
import { proposeMany, stored, writeTargets } from './support/inspect.js';
import { readJournal } from './support/journal.js';
import {
  AGENT,
  operator,
  reliabilityOperations,
  reliabilityWorld,
  TENANT,
  RELIABILITY_LIMITS,
} from './support/world.js';

const LEASE_MS = 200;
const CONFIG = 'test/reliability/support/recover-config.ts';

async function cli(
  argv: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let out = '';
  let err = '';
  try {
    const code = await runCli(argv, {
      stdout: (t) => (out += t),
      stderr: (t) => (err += t),
      stdin: async () => '',
    });
    return { code, out, err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** A local operation the demo configuration does not define. */
const noteAppend = defineOperation({
  kind: 'note.append',
  scopeVersion: 1,
  effect: 'local',
  scope: z.strictObject({ tenant: z.string(), operation: z.literal('note.append'), text: z.string() }),
  request: z.strictObject({ text: z.string().max(100) }),
  arguments: z.strictObject({ text: z.string() }),
  prepare: async (request) => ({ arguments: { text: request.text }, preview: { text: request.text } }),
  execute: async () => ({ appended: true }),
});

interface Lab {
  readonly backend: Backend;
  readonly store: Store;
  readonly engine: Engine;
  readonly dir: string;
  readonly journal: string;
  /** The store option for the CLI: `--db FILE` on SQLite, `--store URL` on PostgreSQL. */
  readonly target: readonly string[];
  close(): Promise<void>;
}

let lab: Lab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

async function openLab(name: BackendName): Promise<Lab> {
  const backend = await createBackend(name);
  const scratch = scratchDir('cli-recover');
  const journal = join(scratch.dir, 'provider.jsonl');
  const store = await backend.open();
  const engine = await createEngine({
    limits: RELIABILITY_LIMITS,
    store,
    operations: [...reliabilityOperations(reliabilityWorld({ invoices: 10, journal })), noteAppend],
    leaseMs: LEASE_MS,
  });
  return {
    backend,
    store,
    engine,
    dir: scratch.dir,
    journal,
    target: name === 'sqlite' ? ['--db', backend.location] : ['--store', backend.location],
    close: async () => {
      await engine.close();
      await backend.dispose();
      scratch.remove();
    },
  };
}

/** Approves without executing: the attempt is claimed and its worker "dies" before doing anything. */
async function claimOnly(engine: Engine, id: string, digest: string): Promise<void> {
  const result = await engine.proposals.approve({
    tenant: TENANT,
    proposalId: id,
    approver: operator('ada'),
    seenDigest: digest,
  });
  if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`);
}

for (const { name, skip } of PROCESS_BACKENDS) {
  describe.skipIf(skip !== undefined)(
    `countersign recover on ${name}${skip ? ` (skipped: ${skip})` : ''}`,
    () => {
      it('re-runs claimed attempts that never ran, re-sends a paid external attempt to its deduplicating provider (no second payment), and does nothing the second time', async () => {
        lab = await openLab(name);
        const l = lab;
        const [local, external] = await proposeMany(l.engine, ['local', 'external'], 'run-cli');
        await claimOnly(l.engine, local!.id, local!.digest);
        const [paid] = await proposeMany(l.engine, ['external'], 'run-cli', 2);
        const args = [
          '--store',
          l.backend.location,
          '--journal',
          l.journal,
          '--invoices',
          '10',
          '--lease-ms',
          String(LEASE_MS),
        ];
        const exit = await runWorker('execute', [
          ...args,
          '--proposals',
          writeTargets(join(l.dir, 't.json'), [paid!]),
          '--fault',
          'kill',
          '--at',
          'after_provider_accepted',
          '--marker',
          join(l.dir, 'm.jsonl'),
        ]);
        expect(exit.signal).toBe('SIGKILL');
        await claimOnly(l.engine, external!.id, external!.digest);
        await sleep(LEASE_MS + 100);

        const first = await cli(['recover', ...l.target, '--config', CONFIG], {
          COUNTERSIGN_TEST_JOURNAL: l.journal,
        });
        expect(first).toMatchObject({
          code: 0,
          out: 'recovered: examined=3 rerun=2 resent=1 to_reconciliation=0 parked=0 skipped=0 held=0 chained=0\n',
        });
        expect((await stored(l.store, local!.id)).record.status).toBe('succeeded');
        expect((await stored(l.store, external!.id)).record.status).toBe('succeeded');
        expect((await stored(l.store, paid!.id)).record.status).toBe('succeeded');
        // The re-run external attempt paid once, under attempt 2; the killed one's command was sent
        // again under its own key, and the provider answered its first payment.
        const journal = readJournal(l.journal);
        expect(journal.payments.get(external!.id)).toEqual([`${external!.id}.2`]);
        expect(journal.payments.get(paid!.id)).toEqual([`${paid!.id}.1`]);
        expect(journal.calls.get(paid!.id)).toBe(2);

        const again = await cli(['recover', ...l.target, '--config', CONFIG, '--json'], {
          COUNTERSIGN_TEST_JOURNAL: l.journal,
        });
        expect(again.code).toBe(0);
        expect(JSON.parse(again.out)).toEqual({
          examined: 0,
          rerun: 0,
          resent: 0,
          toReconciliation: 0,
          parked: 0,
          skipped: 0,
          held: 0,
          chained: 0,
        });
      });

      it('parks an attempt that ran out of attempts and exits 1 for the operator', async () => {
        lab = await openLab(name);
        const l = lab;
        const [local] = await proposeMany(l.engine, ['local'], 'run-cli');
        await claimOnly(l.engine, local!.id, local!.digest);
        await sleep(LEASE_MS + 100);
        const run = await cli(['recover', ...l.target, '--config', CONFIG, '--max-attempts', '1'], {
          COUNTERSIGN_TEST_JOURNAL: l.journal,
        });
        expect(run).toMatchObject({
          code: 1,
          out: 'recovered: examined=1 rerun=0 resent=0 to_reconciliation=0 parked=1 skipped=0 held=0 chained=0\n',
        });
        expect((await stored(l.store, local!.id)).record.status).toBe('terminal_failure');
      });

      it('refuses (exit 2) to sweep expired attempts of an operation its configuration does not define', async () => {
        lab = await openLab(name);
        const l = lab;
        const made = await l.engine.proposals.propose({
          operation: 'note.append',
          request: { text: 'hello' },
          tenant: TENANT,
          resource: 'note:1',
          requestedBy: AGENT.id,
          runId: 'run-cli',
        });
        if (made.kind !== 'proposed') throw new Error(made.modelMessage);
        await claimOnly(l.engine, made.proposal.id, made.proposal.digest);
        await sleep(LEASE_MS + 100);
        const run = await cli(['recover', ...l.target, '--config', CONFIG], {
          COUNTERSIGN_TEST_JOURNAL: l.journal,
        });
        expect(run.code).toBe(2);
        expect(run.err).toContain('note.append');
        expect((await stored(l.store, made.proposal.id)).record.status).toBe('executing');
      });
    },
  );
}

describe('countersign recover and audit checkpoint: usage', () => {
  it('needs a store, and refuses --db together with --store', async () => {
    expect((await cli(['recover'])).code).toBe(2);
    expect((await cli(['recover', '--db', 'a.db', '--store', 'b.db'])).code).toBe(2);
    expect((await cli(['recover', '--db', '/nonexistent/countersign.db'])).code).toBe(2);
    expect((await cli(['recover', '--db', 'a.db', '--limit', '0'])).code).toBe(2);
  });

  it('audit checkpoint prints one head per tenant, refuses a tenant without events and a broken chain', async () => {
    const backend = await createBackend('sqlite');
    const store = await backend.open();
    const engine = await createEngine({
      limits: RELIABILITY_LIMITS,
      store,
      operations: reliabilityOperations(reliabilityWorld({ invoices: 3 })),
    });
    try {
      await proposeMany(engine, ['external', 'local', 'external'], 'run-checkpoint');
      const printed = await cli(['audit', 'checkpoint', '--db', backend.location]);
      expect(printed.code).toBe(0);
      const heads = JSON.parse(printed.out) as {
        tenant: string;
        seq: number;
        chainHash: string;
        takenAt: string;
      }[];
      expect(heads).toEqual([
        {
          tenant: TENANT,
          seq: 3,
          chainHash: expect.stringMatching(/^[0-9a-f]{64}$/),
          takenAt: expect.any(String),
        },
      ]);
      expect(
        JSON.parse((await cli(['audit', 'checkpoint', '--db', backend.location, '--tenant', TENANT])).out),
      ).toHaveLength(1);
      expect(
        await cli(['audit', 'checkpoint', '--db', backend.location, '--tenant', 'globex']),
      ).toMatchObject({ code: 1, out: '' });
      const sql = await backend.sql();
      await sql.run(
        "UPDATE countersign_audit_events SET actor = 'user:mallory' WHERE tenant = ? AND seq = 2",
        [TENANT],
      );
      await sql.close();
      const broken = await cli(['audit', 'checkpoint', '--db', backend.location]);
      expect(broken).toMatchObject({ code: 1, out: '' });
      expect(broken.err).toContain('event=#2');
      expect(existsSync(backend.location)).toBe(true);
    } finally {
      await engine.close();
      await backend.dispose();
    }
  });
});
