import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DemoWorld, demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import type { FaultPoint } from '../../src/engine/faults.js';
import { type AnyOperation, defineOperation } from '../../src/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { claimProposal, type Harness, harnessOn, proposePayment, stallAt } from '../support/engine.js';
import { z } from 'zod';

const LEASE = 60_000;

/** The demo operations with invoice.pay's provider declared as deduplicating (or not), and its executor wrapped when given. */
function operationsOf(
  world: DemoWorld,
  deduplicates: 'idempotency_key' | 'none',
  wrap?: (execute: NonNullable<AnyOperation['execute']>) => NonNullable<AnyOperation['execute']>,
): AnyOperation[] {
  return demoOperations(world).map((op) =>
    op.kind === 'invoice.pay'
      ? {
          ...op,
          provider: { deduplicates },
          ...(wrap && op.execute ? { execute: wrap(op.execute.bind(op)) } : {}),
        }
      : op,
  );
}

describe.each(BACKENDS)('recovery re-sends to a deduplicating provider, on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  let h: Harness<Store> | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function stoppedAt(
    point: FaultPoint,
    deduplicates: 'idempotency_key' | 'none',
    wrap?: Parameters<typeof operationsOf>[2],
  ) {
    const stall = stallAt(point);
    const world = demoWorld();
    h = await harnessOn(backend, {
      leaseMs: LEASE,
      faults: stall.hook,
      world,
      operations: operationsOf(world, deduplicates, wrap),
    });
    const proposal = await proposePayment(h.engine);
    const worker = h.engine.proposals.execute(await claimProposal(h.engine, proposal));
    await stall.reached;
    h.clock.advance(LEASE + 1);
    return { proposal, world, worker, stall };
  }

  it('a worker killed after recording its command, before sending it: the sweep sends it under the same key, one payment, succeeded', async () => {
    const { proposal, world, worker, stall } = await stoppedAt('before_provider_call', 'idempotency_key');
    expect(world.provider.calls).toBe(0);
    expect(await h!.engine.sweeps.recover()).toMatchObject({ examined: 1, resent: 1, toReconciliation: 0 });
    const stored = await h!.engine.proposals.get('acme', proposal.id);
    expect(stored).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(world.provider.payments.map((p) => p.idempotencyKey)).toEqual([`${proposal.id}.1`]);
    const attempts = await h!.store.read((tx) => tx.listAttempts('acme', proposal.id));
    expect(attempts.map((a) => a.status)).toEqual(['abandoned', 'completed']);
    expect(attempts[1]?.commandId).toBe(attempts[0]?.commandId);
    const commands = (await h!.engine.audit.events('acme', proposal.id)).filter((e) => e.step === 'command');
    expect(commands.map((c) => [c.commandId, c.detail['resend'] ?? false])).toEqual([
      [attempts[0]?.commandId, false],
      [attempts[0]?.commandId, true],
    ]);
    // The stopped worker, woken, is fenced: it never calls, and answers the stored outcome.
    stall.release();
    expect(await worker).toEqual(stored?.outcome);
    expect(world.provider.calls).toBe(1);
  });

  it('a worker killed after the provider paid: the resend gets the first payment back, never a second', async () => {
    const { proposal, world } = await stoppedAt('after_provider_accepted', 'idempotency_key');
    const [paid] = world.provider.payments;
    expect(await h!.engine.sweeps.recover()).toMatchObject({ resent: 1 });
    expect(world.provider.calls).toBe(2);
    expect(world.provider.payments).toHaveLength(1);
    expect((await h!.engine.proposals.get('acme', proposal.id))?.outcome).toEqual({
      kind: 'succeeded',
      result: { payment_id: paid?.paymentId },
    });
  });

  it('without the declaration the attempt goes to needs_reconciliation, never re-sent', async () => {
    const { proposal, world } = await stoppedAt('before_provider_call', 'none');
    expect(await h!.engine.sweeps.recover()).toMatchObject({ resent: 0, toReconciliation: 1 });
    expect((await h!.engine.proposals.get('acme', proposal.id))?.status).toBe('needs_reconciliation');
    expect(world.provider.calls).toBe(0);
  });

  it('a resend whose request no longer equals the approved scope is refused before the call and left to reconciliation', async () => {
    let calls = 0;
    const { proposal, world } = await stoppedAt(
      'before_provider_call',
      'idempotency_key',
      (execute) =>
        // The second run asks for one cent more than was approved.
        (args, ctx) =>
          execute(
            {
              ...(args as object),
              amount_minor: (args as { amount_minor: number }).amount_minor + (calls++ > 0 ? 1 : 0),
            },
            ctx,
          ),
    );
    expect(await h!.engine.sweeps.recover()).toMatchObject({ resent: 1 });
    expect((await h!.engine.proposals.get('acme', proposal.id))?.status).toBe('needs_reconciliation');
    expect(world.provider.calls).toBe(0);
    const denied = (await h!.engine.audit.events('acme', proposal.id)).find((e) => e.step === 'denied');
    expect(denied?.reason).toBe('scope_mismatch');
    // Reconciliation looks the command up by the key it was first recorded under.
    const reconciled = await h!.engine.sweeps.reconcileDue();
    expect(reconciled).toMatchObject({ examined: 0 });
    h!.clock.advance(10_001);
    expect(await h!.engine.sweeps.reconcileDue()).toMatchObject({ reconciled: 1 });
    const step = (await h!.engine.audit.events('acme', proposal.id)).find((e) => e.step === 'reconciled');
    expect(step?.detail['idempotencyKey']).toBe(`${proposal.id}.1`);
  });

  it('after maxAttempts resends the attempt goes to needs_reconciliation', async () => {
    const world = demoWorld();
    const reached = new Map<number, () => void>();
    const reachedAt = (n: number) => new Promise<void>((resolve) => reached.set(n, resolve));
    const first = reachedAt(1);
    const second = reachedAt(2);
    h = await harnessOn(backend, {
      leaseMs: LEASE,
      world,
      operations: operationsOf(world, 'idempotency_key'),
      faults: async (point, info) => {
        if (point !== 'before_provider_call') return;
        reached.get(info.attemptNumber)?.();
        await new Promise<never>(() => {});
      },
    });
    const proposal = await proposePayment(h.engine);
    void h.engine.proposals.execute(await claimProposal(h.engine, proposal));
    await first;
    h.clock.advance(LEASE + 1);
    void h.engine.sweeps.recover({ maxAttempts: 2 });
    await second;
    h.clock.advance(LEASE + 1);
    expect(await h.engine.sweeps.recover({ maxAttempts: 2 })).toMatchObject({
      resent: 0,
      toReconciliation: 1,
    });
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('needs_reconciliation');
    expect(world.provider.calls).toBe(0);
  });
});

describe('provider declaration', () => {
  const base = {
    kind: 'note.add',
    scopeVersion: 1,
    scope: z.strictObject({ tenant: z.string(), operation: z.string() }),
  } as const;

  it('defaults to none and is frozen', () => {
    expect(defineOperation(base).provider).toEqual({ deduplicates: 'none' });
    expect(Object.isFrozen(defineOperation(base).provider)).toBe(true);
  });

  it('refuses it on a local effect and an unknown value', () => {
    expect(() => defineOperation({ ...base, provider: { deduplicates: 'idempotency_key' } })).toThrow(
      'note.add: provider.deduplicates is for external effects; a local effect commits with its outcome',
    );
    expect(() =>
      defineOperation({
        ...base,
        effect: 'external',
        provider: { deduplicates: 'yes' as unknown as 'none' },
      }),
    ).toThrow(`note.add: provider.deduplicates must be 'idempotency_key' or 'none', not "yes"`);
  });
});
