import { afterEach, describe, expect, it } from 'vitest';
import { approver, type Harness, harness, proposePayment } from '../support/engine.js';

/** A clock that moves on by `step` ms at every reading, like a busy machine between two reads. */
class TickingClock {
  constructor(
    public time: number,
    readonly step: number,
  ) {}
  now(): number {
    this.time += this.step;
    return this.time;
  }
}

describe('one clock reading per decision', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('an approval checked 26 ms before expiry is audited before expiry, every event of it at the same instant', async () => {
    const clock = new TickingClock(Date.UTC(2026, 10, 29, 12), 10);
    h = await harness({ clock });
    const p = await proposePayment(h.engine);
    const expiresAt = p.expiresAt.getTime();
    clock.time = expiresAt - 26;
    const r = await h.engine.proposals.approve({
      tenant: 'acme',
      proposalId: p.id,
      approver: approver(),
      seenDigest: p.digest,
    });
    expect(r.kind).toBe('claimed');
    const events = (await h.engine.audit.events('acme', p.id)).filter((e) => e.step !== 'proposed');
    expect(events.map((e) => e.step)).toEqual(['approved', 'claimed']);
    const times = new Set(events.map((e) => e.at));
    expect(times.size).toBe(1);
    expect([...times][0]).toBeLessThan(expiresAt);
    const stored = await h.engine.proposals.get('acme', p.id);
    expect(stored?.decidedAt?.getTime()).toBe([...times][0]);
  });

  it('a decline checked 26 ms before expiry is audited before expiry', async () => {
    const clock = new TickingClock(Date.UTC(2026, 10, 29, 12), 10);
    h = await harness({ clock });
    const p = await proposePayment(h.engine);
    clock.time = p.expiresAt.getTime() - 26;
    const r = await h.engine.proposals.decline({ tenant: 'acme', proposalId: p.id, actor: approver() });
    expect(r.kind).toBe('declined');
    const declined = (await h.engine.audit.events('acme', p.id)).find((e) => e.step === 'declined');
    expect(declined?.at).toBeLessThan(p.expiresAt.getTime());
  });
});
