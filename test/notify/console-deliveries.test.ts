import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxOf } from '../../src/store/sql-outbox.js';
import { ConsoleClient } from '../server/support/console-client.js';
import { proposeViaApi, type ServerHarness, serverHarness } from '../server/support/server-harness.js';

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({ notifications: true });
});
afterAll(async () => {
  await h.close();
});

async function signedIn(role: 'admin' | 'approver' | 'viewer', tenant: 'acme' | 'globex' = 'acme') {
  const client = new ConsoleClient(h.url);
  const who = h.tenants[tenant].operators[role];
  expect((await client.login(who.email, who.password)).status).toBe(303);
  return client;
}

describe('the deliveries page', () => {
  it('shows an admin the tenant’s deliveries with status, attempts and last error, escaped, and redelivers', async () => {
    const pay = { operation: 'invoice.pay', request: { invoice_id: 'inv-104' } };
    const proposal = await proposeViaApi(h, 'acme', pay);
    await proposeViaApi(h, 'globex', pay);
    // A receiver that answered with hostile text: the page shows it as text, its bidi control marked.
    const [row] = await h.store.transaction((tx) =>
      outboxOf(tx, h.store.capabilities).list('acme', { limit: 1 }),
    );
    await h.store.transaction(async (tx) => {
      const outbox = outboxOf(tx, h.store.capabilities);
      await outbox.claim({ now: Date.now() + 1e9, leaseUntil: Date.now() + 2e9, owner: 'test', limit: 10 });
      await outbox.finish('acme', row!.id, 'test', {
        status: 'dead',
        nextAt: 0,
        lastError: '<img src=x onerror=alert(1)> HTTP 500\u202E',
        at: h.clock.now(),
      });
    });
    const admin = await signedIn('admin');
    const page = await admin.get('/deliveries');
    expect(page.status).toBe(200);
    expect(page.html).toContain('aria-current="page">Deliveries</a>');
    expect(page.html).toContain(proposal.id);
    expect(page.html).toContain('terminal_failure">dead</span>');
    expect(page.html).not.toContain('<img src=x');
    expect(page.html).toContain('&lt;img src=x onerror=alert(1)&gt; HTTP 500');
    expect(page.html).toContain('⟦U+202E⟧');
    expect(page.html).not.toContain('\u202E');
    // Only acme's deliveries.
    const globex = await h.store.transaction((tx) =>
      outboxOf(tx, h.store.capabilities).list('globex', { limit: 5 }),
    );
    expect(globex.length).toBeGreaterThan(0);
    for (const g of globex) expect(page.html).not.toContain(g.id);

    const csrf = await admin.csrf();
    const again = await admin.post(`/deliveries/${row!.id}/redeliver`, { csrf });
    expect(again.status).toBe(303);
    expect(again.location).toBe('/deliveries');
    const [after] = await h.store.transaction((tx) =>
      outboxOf(tx, h.store.capabilities).list('acme', { limit: 1 }),
    );
    expect([after?.id, after?.status, after?.attempts]).toEqual([row!.id, 'pending', 0]);
    // Another tenant's delivery is not found, exactly like a missing one.
    expect((await admin.post(`/deliveries/${globex[0]!.id}/redeliver`, { csrf })).status).toBe(404);
    expect((await admin.post(`/deliveries/${row!.id}/redeliver`, { csrf: 'forged' })).status).toBe(403);
  });

  it('is for admins only: an approver gets 403 and no link', async () => {
    const approver = await signedIn('approver');
    const page = await approver.get('/deliveries');
    expect(page.status).toBe(403);
    expect((await approver.get('/')).html).not.toContain('href="/deliveries"');
  });
});
