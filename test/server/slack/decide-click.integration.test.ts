import { afterEach, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../../src/demo/demo-world.js';
import { decideClick } from '../../../src/server/slack/slack-routes.js';
import { approver, type Harness, harness, proposePayment, viewer } from '../../support/engine.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const buttonOf = (p: { id: string; digest: string }, digest = p.digest) => ({
  tenant: 'acme',
  proposalId: p.id,
  digest,
});

describe('a Slack click decides through the engine', () => {
  it('approves with the digest the card showed, and refuses another digest: stale_view, for approve and decline', async () => {
    h = await harness();
    const p = await proposePayment(h.engine);
    const stale = buttonOf(p, 'f'.repeat(64));
    expect(await decideClick(h.engine, approver(), 'approve', stale)).toMatchObject({ reason: 'stale_view' });
    expect(await decideClick(h.engine, approver(), 'decline', stale)).toMatchObject({ reason: 'stale_view' });
    expect(await decideClick(h.engine, viewer(), 'approve', buttonOf(p))).toMatchObject({
      reason: 'forbidden',
    });
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('pending');
    expect(await decideClick(h.engine, approver(), 'approve', buttonOf(p))).toEqual({ kind: 'approved' });
    expect(await decideClick(h.engine, approver('acme', 'bob'), 'approve', buttonOf(p))).toMatchObject({
      reason: 'replayed',
    });
    expect(await decideClick(h.engine, approver('acme', 'bob'), 'decline', buttonOf(p))).toEqual({
      kind: 'refused',
      reason: 'replayed',
      message: 'the proposal is succeeded',
    });
  });

  it("another tenant's operator finds nothing: not_found", async () => {
    h = await harness();
    const p = await proposePayment(h.engine);
    expect(
      await decideClick(h.engine, approver('globex'), 'approve', { ...buttonOf(p), tenant: 'globex' }),
    ).toMatchObject({ reason: 'not_found' });
  });

  it('an operation that opted out (chatApproval: false) is decided in the console only: forbidden', async () => {
    const world = demoWorld();
    h = await harness({
      world,
      operations: demoOperations(world).map((o) =>
        o.kind === 'invoice.pay' ? { ...o, chatApproval: false } : o,
      ),
    });
    const p = await proposePayment(h.engine);
    for (const action of ['approve', 'decline'] as const)
      expect(await decideClick(h.engine, approver(), action, buttonOf(p))).toEqual({
        kind: 'refused',
        reason: 'forbidden',
        message: 'this operation is decided in the console only',
      });
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('pending');
  });
});
