import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from './support/console-client.js';
import { freshInvoice, proposeViaApi, type ServerHarness, serverHarness } from './support/server-harness.js';

// Hole 4 of issue 10: `/proposals/:id?done=approved` used to print "Approved." over a pending
// proposal. What a form post did now reaches the next page only through a one-time cookie bound
// by an HMAC to the session and the page, and only while the stored status agrees.

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness();
});
afterAll(async () => {
  await h.close();
});

async function signedIn(role: 'approver' | 'admin' = 'approver') {
  const client = new ConsoleClient(h.url);
  const op = h.tenants.acme.operators[role];
  expect((await client.login(op.email, op.password)).status).toBe(303);
  return client;
}

async function pendingPayment() {
  const invoice = freshInvoice(h.world, 'acme');
  return proposeViaApi(h, 'acme', {
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    resource: `invoice:${invoice}`,
  });
}

const OUTCOME_TEXTS = [
  'Approved.',
  'already decided',
  'Declined.',
  'Reconciled with the provider',
  'The provider has no final answer yet',
  'Saved as a new proposal',
];

const FLASH_COOKIE = '__Host-countersign_flash';

describe('the console flash after a form post', () => {
  it('a ?done= link on a pending proposal shows no outcome and keeps the Approve button', async () => {
    const proposal = await pendingPayment();
    const client = await signedIn();
    for (const done of ['approved', 'replayed', 'declined', 'reconciled', 'still_pending', 'edited']) {
      const page = await client.get(`/proposals/${proposal.id}?done=${done}`);
      expect(page.status, done).toBe(200);
      for (const text of OUTCOME_TEXTS) expect(page.html, `${done}: ${text}`).not.toContain(text);
      expect(page.html, done).not.toContain('class="banner');
      expect(page.html, done).toContain(`Approve <span class="hash">${proposal.short}</span>`);
    }
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
  });

  it('after a real approval the outcome is shown once, then not again on reload', async () => {
    const proposal = await pendingPayment();
    const client = await signedIn();
    const approve = await client.post(`/proposals/${proposal.id}/approve`, {
      digest: proposal.digest,
      csrf: await client.csrf(),
    });
    expect(approve.status).toBe(303);
    expect(approve.location).toBe(`/proposals/${proposal.id}`);
    const setCookie = approve.response.headers.getSetCookie().find((l) => l.startsWith(FLASH_COOKIE));
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Max-Age=60/i);
    const first = await client.get(approve.location!);
    expect(first.html).toContain('Approved. The contract was executed once; its outcome is below.');
    expect(client.cookies.has(FLASH_COOKIE)).toBe(false);
    const reload = await client.get(approve.location!);
    expect(reload.html).not.toContain('Approved. The contract was executed once');
    expect(reload.html).toContain('<p class="headline">Succeeded</p>');
  });

  it('a flash cookie does not verify in another session, on another proposal, or when forged', async () => {
    const [approved, other] = [await pendingPayment(), await pendingPayment()];
    const alice = await signedIn();
    await alice.post(`/proposals/${approved.id}/approve`, {
      digest: approved.digest,
      csrf: await alice.csrf(),
    });
    const stolen = alice.cookies.get(FLASH_COOKIE);
    expect(stolen).toMatch(/^approved\./);

    // Another operator's browser, given alice's flash cookie, on the same decided proposal.
    const bob = await signedIn();
    bob.cookies.set(FLASH_COOKIE, stolen!);
    expect((await bob.get(`/proposals/${approved.id}`)).html).not.toContain('Approved.');

    // Alice's own flash, carried to another (pending) proposal.
    alice.cookies.set(FLASH_COOKIE, stolen!);
    const elsewhere = await alice.get(`/proposals/${other.id}`);
    expect(elsewhere.html).not.toContain('Approved.');
    expect(elsewhere.html).toContain(`Approve <span class="hash">${other.short}</span>`);

    // A made-up value, and a valid MAC relabelled with another kind.
    for (const forged of ['approved.AAAA', `declined.${stolen!.split('.')[1]}`]) {
      alice.cookies.set(FLASH_COOKIE, forged);
      const page = await alice.get(`/proposals/${approved.id}`);
      for (const text of OUTCOME_TEXTS) expect(page.html, `${forged}: ${text}`).not.toContain(text);
    }
  });

  it('the grants page ignores ?done= and shows a grant outcome only after the post', async () => {
    const admin = await signedIn('admin');
    for (const done of ['created', 'revoked']) {
      const page = await admin.get(`/grants?done=${done}`);
      expect(page.html).not.toContain('Grant created.');
      expect(page.html).not.toContain('Grant revoked.');
    }
  });
});
