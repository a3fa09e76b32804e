import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxOf } from '../../src/store/sql-outbox.js';
import { call, proposeViaApi, type ServerHarness, serverHarness } from '../server/support/server-harness.js';

// The deliveries API as each adversary meets it: an agent, a viewer or an approver of the tenant,
// another tenant's admin, malformed input, a flood of redeliveries, a row written by hand.
let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({ notifications: true });
});
afterAll(async () => {
  await h.close();
});

const acmeDeliveries = () =>
  h.store.transaction((tx) => outboxOf(tx, h.store.capabilities).list('acme', { limit: 50 }));

describe('the deliveries API under attack', () => {
  it('refuses agents, viewers and approvers by name; another tenant’s admin finds nothing to list or redeliver', async () => {
    await proposeViaApi(h, 'acme', { operation: 'invoice.pay', request: { invoice_id: 'inv-104' } });
    const [row] = await acmeDeliveries();
    expect(row).toBeDefined();

    const acme = h.tenants.acme;
    for (const token of [acme.agentToken, acme.operators.viewer.token, acme.operators.approver.token]) {
      const list = await call(h, 'GET', '/api/v1/deliveries', { token });
      expect([list.status, list.body['reason']]).toEqual([403, 'forbidden']);
      const again = await call(h, 'POST', `/api/v1/deliveries/${row!.id}/redeliver`, { token });
      expect([again.status, again.body['reason']]).toEqual([403, 'forbidden']);
    }
    const anonymous = await call(h, 'GET', '/api/v1/deliveries');
    expect(anonymous.status).toBe(401);

    const globexAdmin = h.tenants.globex.operators.admin.token;
    const theirs = await call(h, 'GET', '/api/v1/deliveries', { token: globexAdmin });
    expect(theirs.status).toBe(200);
    expect((theirs.body['items'] as { id: string }[]).map((d) => d.id)).not.toContain(row!.id);
    const cross = await call(h, 'POST', `/api/v1/deliveries/${row!.id}/redeliver`, { token: globexAdmin });
    expect([cross.status, cross.body['reason']]).toEqual([404, 'not_found']);
  });

  it('names the field of malformed input, and never answers 500', async () => {
    const token = h.tenants.acme.operators.admin.token;
    for (const query of ['?status=everything', '?limit=0', '?limit=201', '?limit=1e2', '?limit=-1']) {
      const r = await call(h, 'GET', `/api/v1/deliveries${query}`, { token });
      expect([r.status, r.body['reason']]).toEqual([422, 'invalid_request']);
    }
    for (const id of ['dlv_', "dlv_' OR 1=1 --", 'x'.repeat(5000), 'dlv_%00']) {
      const r = await call(h, 'POST', `/api/v1/deliveries/${encodeURIComponent(id)}/redeliver`, { token });
      expect([r.status, r.body['reason']]).toEqual([404, 'not_found']);
    }
  });

  it('a flood of redeliveries queues one delivery once, under its stable id, and leaves the rest alone', async () => {
    const token = h.tenants.acme.operators.admin.token;
    const before = await acmeDeliveries();
    const target = before[0]!;
    await h.store.transaction(async (tx) => {
      const outbox = outboxOf(tx, h.store.capabilities);
      await outbox.claim({ now: Date.now() + 1e9, leaseUntil: Date.now() + 2e9, owner: 'test', limit: 50 });
      await outbox.finish('acme', target.id, 'test', {
        status: 'dead',
        nextAt: 0,
        lastError: 'HTTP 500',
        at: 1,
      });
    });
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        call(h, 'POST', `/api/v1/deliveries/${target.id}/redeliver`, { token }),
      ),
    );
    for (const a of answers) expect(a.status === 200 || a.body['reason'] === 'rate_limited').toBe(true);
    expect(answers.filter((a) => a.status === 200 && a.body['queued'] === true)).toHaveLength(1);
    const after = await acmeDeliveries();
    expect(after).toHaveLength(before.length);
    expect(after.find((d) => d.id === target.id)).toMatchObject({ status: 'pending', attempts: 0 });
  });
});
