import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoWorld, invoicePay, invoicePayScope } from '../../src/demo/demo-world.js';
import {
  type AnyOperation,
  createEngine,
  defineOperation,
  OperationDefinitionError,
} from '../../src/index.js';
import { parseJson } from '../../src/canonical/index.js';
import { decodeProposalRecord } from '../../src/store/proposal-format.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, storeOn, warmUp } from '../support/backends.js';
import { agent, approver, ManualClock } from '../support/engine.js';

/** invoice.pay at scope version 2: the same shape, but this code no longer supports version 1. */
function invoicePayV2(world = demoWorld()): AnyOperation {
  const v1 = invoicePay(world);
  return defineOperation({
    kind: 'invoice.pay',
    scopeVersion: 2,
    scope: invoicePayScope,
    effect: 'external',
    request: v1.request!,
    arguments: v1.arguments!,
    prepare: v1.prepare!,
    commandScope: v1.commandScope!,
    execute: v1.execute!,
    reconcile: v1.reconcile!,
  });
}

const fixture = () =>
  decodeProposalRecord(
    parseJson(readFileSync(join(import.meta.dirname, '../fixtures/proposal-format-v1.json'), 'utf8')),
  );

describe('shadow mode', () => {
  it('is a startup error on a high-impact operation', () => {
    expect(() =>
      defineOperation({ kind: 'invoice.pay', scopeVersion: 1, scope: invoicePayScope, shadow: true }),
    ).toThrow(OperationDefinitionError);
  });
});

describe.each(BACKENDS)('on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  const disposals: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const dispose of disposals.splice(0)) await dispose();
  });

  /** A fresh store on this backend, removed after the test (its engine closes it). */
  async function freshStore(): Promise<Store> {
    const { store, dispose } = await storeOn(backend);
    disposals.push(dispose);
    return store;
  }

  describe('scope versions', () => {
    it('a pending version-1 proposal is refused by code that supports only version 2: unsupported_scope_version', async () => {
      const record = fixture();
      const store = await freshStore();
      const world = demoWorld();
      const engine = await createEngine({
        store,
        operations: [invoicePayV2(world)],
        clock: new ManualClock(record.createdAt),
      });
      await store.transaction((tx) => tx.insertProposal(record));
      const r = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: record.id,
        approver: approver(),
        seenDigest: record.digest,
      });
      expect(r).toMatchObject({ kind: 'not_approvable', reason: 'unsupported_scope_version' });
      expect(world.provider.calls).toBe(0);
      await engine.close();
    });

    it('expireVersion retires pending proposals below a version with that reason, audited, and leaves the rest', async () => {
      const record = fixture();
      const store = await freshStore();
      const engine = await createEngine({
        store,
        operations: [invoicePayV2()],
        clock: new ManualClock(record.createdAt),
      });
      await store.transaction((tx) => tx.insertProposal(record));
      const fresh = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-105' },
        tenant: 'acme',
        resource: 'invoice:inv-105',
        requestedBy: agent().id,
        runId: 'run-2',
      });
      expect(fresh.kind === 'proposed' && fresh.proposal.scopeVersion).toBe(2);
      expect(
        await engine.sweeps.expireVersion({ operation: 'invoice.pay', below: 2, actor: 'system:test' }),
      ).toEqual({
        expired: 1,
        tenants: { acme: 1 },
      });
      expect((await engine.proposals.get('acme', record.id))?.status).toBe('expired');
      if (fresh.kind === 'proposed')
        expect((await engine.proposals.get('acme', fresh.proposal.id))?.status).toBe('pending');
      const expired = (await engine.audit.events('acme', record.id)).find((e) => e.step === 'expired');
      expect(expired).toMatchObject({
        reason: 'unsupported_scope_version',
        detail: { scopeVersion: 1, below: 2 },
      });
      await engine.close();
    });
  });

  describe('a proposal whose operation this engine cannot handle', () => {
    const other = defineOperation({
      kind: 'report.search',
      scopeVersion: 1,
      scope: z.strictObject({ tenant: z.string(), operation: z.literal('report.search'), query: z.string() }),
    });
    const open = async (operations: AnyOperation[], status: 'pending' | 'needs_reconciliation') => {
      const record = { ...fixture(), status, currentAttempt: status === 'pending' ? 0 : 1 };
      const store = await freshStore();
      const engine = await createEngine({ store, operations, clock: new ManualClock(record.createdAt) });
      await store.transaction((tx) => tx.insertProposal(record));
      return { engine, record };
    };

    it('is unknown_operation when the kind is not registered: approve and edit', async () => {
      const { engine, record } = await open([other], 'pending');
      const approved = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: record.id,
        approver: approver(),
        seenDigest: record.digest,
      });
      expect(approved).toMatchObject({ kind: 'not_approvable', reason: 'unknown_operation' });
      const edited = await engine.proposals.edit({
        tenant: 'acme',
        proposalId: record.id,
        editor: approver(),
        changes: {},
      });
      expect(edited).toMatchObject({ kind: 'not_editable', reason: 'unknown_operation' });
      expect((await engine.proposals.get('acme', record.id))?.status).toBe('pending');
      await engine.close();
    });

    it('is unknown_operation on reconcile when the kind is not registered', async () => {
      const { engine, record } = await open([other], 'needs_reconciliation');
      const r = await engine.proposals.reconcile({
        tenant: 'acme',
        proposalId: record.id,
        actor: approver(),
      });
      expect(r).toMatchObject({ kind: 'not_reconcilable', reason: 'unknown_operation' });
      await engine.close();
    });

    it('is reconcile_unsupported when the registered operation defines no reconcile step', async () => {
      const noReconcile = defineOperation({ kind: 'invoice.pay', scopeVersion: 1, scope: invoicePayScope });
      const { engine, record } = await open([noReconcile], 'needs_reconciliation');
      const r = await engine.proposals.reconcile({
        tenant: 'acme',
        proposalId: record.id,
        actor: approver(),
      });
      expect(r).toMatchObject({ kind: 'not_reconcilable', reason: 'reconcile_unsupported' });
      expect((await engine.proposals.get('acme', record.id))?.status).toBe('needs_reconciliation');
      await engine.close();
    });
  });

  describe('shadow mode', () => {
    const lowImpact = (shadow: boolean, mutate: boolean) =>
      defineOperation({
        kind: 'report.search',
        scopeVersion: 1,
        impact: 'low',
        shadow,
        scope: z.strictObject({
          tenant: z.string(),
          operation: z.literal('report.search'),
          query: z.string(),
        }),
        request: z.strictObject({ query: z.string() }),
        arguments: z.strictObject({ query: z.string() }),
        prepare: async (r) => ({ arguments: r, preview: { query: r.query } }),
        effect: 'local',
        execute: async (args, ctx) =>
          ctx.command(mutate ? { query: args.query, trace_id: 't-1' } : args, async () => ({ hits: 3 })),
      });

    it.each([
      [true, 'succeeded'],
      [false, 'terminal_failure'],
    ] as const)(
      'shadow=%s: a mismatch is audited as shadow_mismatch and the call goes ahead (else refused)',
      async (shadow, expected) => {
        const engine = await createEngine({
          store: await freshStore(),
          operations: [lowImpact(shadow, true)],
        });
        const p = await engine.proposals.propose({
          operation: 'report.search',
          request: { query: 'q' },
          tenant: 'acme',
          resource: 'reports',
          requestedBy: agent().id,
          runId: 'r',
        });
        if (p.kind !== 'proposed') throw new Error('not proposed');
        const r = await engine.proposals.approveAndExecute({
          tenant: 'acme',
          proposalId: p.proposal.id,
          approver: approver(),
          seenDigest: p.proposal.digest,
        });
        expect(r.kind === 'completed' && r.outcome.kind).toBe(expected);
        const events = await engine.audit.events('acme', p.proposal.id);
        const mismatch = events.find((e) => e.step === (shadow ? 'shadow_mismatch' : 'denied'));
        expect(mismatch).toMatchObject({
          reason: 'invalid_requested_scope',
          detail: { issues: ['$.trace_id: unknown field'] },
        });
        await engine.close();
      },
    );
  });
});
