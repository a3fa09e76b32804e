import { afterEach, describe, expect, it } from 'vitest';
import { demoOperations } from '../../src/demo/demo-world.js';
import { createEngine, type Engine, FencedAttemptError } from '../../src/index.js';
import {
  approver,
  approveSettled,
  type Harness,
  harness,
  proposeDraft,
  proposePayment,
  stallAt,
} from '../support/engine.js';

const LEASE = 60_000;
let h: Harness | undefined;
const others: Engine[] = [];
afterEach(async () => {
  others.splice(0);
  await h?.close();
  h = undefined;
});

/** Another server on the same store: the one that takes handed-back work over. */
async function anotherServer(of: Harness): Promise<Engine> {
  const engine = await createEngine({
    store: of.store,
    operations: demoOperations(of.world),
    clock: of.clock,
    leaseMs: LEASE,
  });
  others.push(engine);
  return engine;
}

describe('engine.releaseLeases (graceful shutdown)', () => {
  it('hands back a payment not yet sent: its lease ends now, another server pays it once, the first stops', async () => {
    const stall = stallAt('after_revalidation');
    h = await harness({ leaseMs: LEASE, faults: stall.hook });
    const payment = await proposePayment(h.engine);
    const running = approveSettled(h.engine, payment);
    await stall.reached;
    expect(await h.engine.sweeps.releaseLeases()).toBe(1);
    h.clock.advance(1);
    const other = await anotherServer(h);
    expect(await other.sweeps.recover()).toMatchObject({ examined: 1, rerun: 1 });
    expect((await other.proposals.get('acme', payment.id))?.status).toBe('succeeded');
    stall.release();
    // The first worker stops at its command and reads the stored outcome: nothing sent twice.
    expect(await running).toMatchObject({ kind: 'completed', outcome: { kind: 'succeeded' } });
    expect(h.world.provider.calls).toBe(1);
  });

  it('keeps a payment already being sent: nothing is handed back and it finishes where it is', async () => {
    const stall = stallAt('before_provider_call');
    h = await harness({ leaseMs: LEASE, faults: stall.hook });
    const payment = await proposePayment(h.engine);
    const running = h.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: payment.id,
      approver: approver(),
      seenDigest: payment.digest,
    });
    await stall.reached;
    expect(await h.engine.sweeps.releaseLeases()).toBe(0);
    h.clock.advance(1);
    expect(await (await anotherServer(h)).sweeps.recover()).toMatchObject({ examined: 0 });
    stall.release();
    expect(await running).toMatchObject({ kind: 'completed', outcome: { kind: 'succeeded' } });
    expect(h.world.provider.calls).toBe(1);
  });

  it('hands back a local effect that has not begun, and executes nothing new afterwards', async () => {
    const stall = stallAt('after_claim');
    h = await harness({ leaseMs: LEASE, faults: stall.hook });
    const draft = await proposeDraft(h.engine);
    const running = approveSettled(h.engine, draft);
    await stall.reached;
    expect(await h.engine.sweeps.releaseLeases()).toBe(1);
    stall.release();
    // Nothing was stored for it yet: the worker says it no longer owns the attempt.
    expect(await running).toBeInstanceOf(FencedAttemptError);
    expect((await h.engine.proposals.get('acme', draft.id))?.status).toBe('executing');
    h.clock.advance(1);
    expect(await (await anotherServer(h)).sweeps.recover()).toMatchObject({ examined: 1, rerun: 1 });
    expect((await h.engine.proposals.get('acme', draft.id))?.status).toBe('succeeded');
  });
});
