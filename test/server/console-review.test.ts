import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from './support/console-client.js';
import { reviewOperation } from './support/review-operation.js';
import { freshInvoice, proposeViaApi, type ServerHarness, serverHarness } from './support/server-harness.js';

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({ extraOperations: [reviewOperation] });
});
afterAll(async () => {
  await h.close();
});

async function signedIn() {
  const client = new ConsoleClient(h.url);
  const op = h.tenants.acme.operators.approver;
  expect((await client.login(op.email, op.password)).status).toBe(303);
  return client;
}

let payees = 0;
const payout = (payee = `Payee ${++payees}`, account = 'acct-supplier-7', amount_minor = 4_000) =>
  proposeViaApi(h, 'acme', {
    operation: 'payout.send',
    request: { payee, account, amount_minor },
    runId: 'run-review',
  });

/** The part of a page inside the first element carrying `data-testid="<id>"` (or the attribute given) to its closing tag. */
function part(html: string, id: string): string {
  const start = html.indexOf(id.includes('=') ? id : `data-testid="${id}"`);
  if (start === -1) return '';
  const open = html.lastIndexOf('<', start);
  const tag = /^<([a-z0-9]+)/.exec(html.slice(open))?.[1] ?? 'div';
  const end = html.indexOf(`</${tag}>`, start);
  return html.slice(open, end === -1 ? undefined : end + tag.length + 3);
}

/** A page's text as a reader sees it: tags dropped, whitespace collapsed. */
function text(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

const fieldsIn = (html: string) => [...html.matchAll(/<dt[^>]*data-field="([^"]+)"/g)].map((m) => m[1]);

describe('the review page', () => {
  it('shows the preview in the order the operation declares, high-impact fields emphasised', async () => {
    const p = await payout();
    const page = await (await signedIn()).get(`/proposals/${p.id}`);
    const preview = part(page.html, 'preview');
    // Stored previews are canonical JSON (account, amount, memo, payee): the page does not follow that.
    expect(fieldsIn(preview)).toEqual(['payee', 'amount', 'account', 'memo']);
    const emphasised = [
      ...preview.matchAll(/<dt[^>]*class="[^"]*high-impact[^"]*"[^>]*data-field="([^"]+)"/g),
    ].map((m) => m[1]);
    expect(emphasised).toEqual(['amount', 'account']);
    expect(text(preview)).toContain('Amount high impact');
  });

  it('shows an edit as old → new for every changed field, redacted, linked both ways', async () => {
    const p = await payout();
    const client = await signedIn();
    const saved = await client.post(`/proposals/${p.id}/edit`, {
      csrf: await client.csrf(),
      'field.account': 'acct-personal-2',
      'field.amount_minor': '40000',
    });
    expect(saved.status).toBe(303);
    const newId = /^\/proposals\/(prp_[0-9a-z]+)$/.exec(saved.location!)![1]!;
    const page = await client.get(`/proposals/${newId}`);
    const changes = part(page.html, 'edit-changes');
    expect(text(changes)).toContain('Changed by this edit');
    const rows = [...changes.matchAll(/<tr[^>]*data-field="([^"]+)"[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => [
      m[1],
      text(m[2]!).trim(),
    ]);
    expect(rows).toEqual([
      ['account', expect.stringMatching(/^Account high impact …er-7 → …al-2$/)],
      [
        'amount_minor',
        expect.stringMatching(
          /^Amount minor high impact 40.00 USD 4000 minor units → 400.00 USD 40000 minor units$/,
        ),
      ],
    ]);
    // The redacted forms only: neither account appears in the changes.
    expect(changes).not.toMatch(/acct-supplier-7|acct-personal-2/);
    expect(part(page.html, 'supersedes')).toContain(`href="/proposals/${p.id}"`);
    expect(changes).toContain(`href="/proposals/${p.id}"`);

    const old = await client.get(`/proposals/${p.id}`);
    expect(part(old.html, 'superseded-by')).toContain(`href="/proposals/${newId}"`);
    const forward = part(old.html, 'edit-changes');
    expect(text(forward)).toContain('Changed by the edit that replaced it');
    expect(forward).toContain(`href="/proposals/${newId}"`);
    expect(text(forward)).toContain('…er-7 → …al-2');
  });

  it('links a proposal made again after revision required to the one it replaces, and back', async () => {
    const invoice = freshInvoice(h.world, 'acme');
    const propose = () =>
      proposeViaApi(h, 'acme', {
        operation: 'invoice.pay',
        request: { invoice_id: invoice },
        resource: `invoice:${invoice}`,
      });
    const first = await propose();
    h.world.invoices.find('acme', invoice)!.dueMinor = 26_000;
    const client = await signedIn();
    const approved = await client.post(`/proposals/${first.id}/approve`, {
      digest: first.digest,
      csrf: await client.csrf(),
    });
    expect(approved.status).toBe(303);
    expect((await h.engine.proposals.get('acme', first.id))?.status).toBe('revision_required');
    h.clock.advance(1_000);
    const again = await propose();

    const page = await client.get(`/proposals/${again.id}`);
    expect(part(page.html, 'replaces')).toContain(`href="/proposals/${first.id}"`);
    expect(text(part(page.html, 'replaces'))).toContain(first.short);
    const old = await client.get(`/proposals/${first.id}`);
    expect(part(old.html, 'replaced-by')).toContain(`href="/proposals/${again.id}"`);
    // Another tenant's reviewer finds neither proposal.
    const other = new ConsoleClient(h.url);
    const globex = h.tenants.globex.operators.approver;
    await other.login(globex.email, globex.password);
    expect((await other.get(`/proposals/${first.id}`)).status).toBe(404);
  });

  it('warns when other pending proposals have the same scope, with links', async () => {
    const [a, b, c] = [await payout('Acme Twins'), await payout('Acme Twins'), await payout('Acme Twins')];
    const distinct = await payout('Acme Twins', 'acct-supplier-7', 4_001);
    const client = await signedIn();
    const page = await client.get(`/proposals/${a.id}`);
    const warning = part(page.html, 'same-scope');
    expect(text(warning)).toContain('2 other pending proposals have the same scope');
    expect(warning).toContain(`href="/proposals/${b.id}"`);
    expect(warning).toContain(`href="/proposals/${c.id}"`);
    expect(warning).not.toContain(a.id);
    expect(part((await client.get(`/proposals/${distinct.id}`)).html, 'same-scope')).toBe('');
    // Once the others are decided, nothing is left to warn about.
    const csrf = await client.csrf();
    for (const other of [b, c]) await client.post(`/proposals/${other.id}/decline`, { csrf });
    expect(part((await client.get(`/proposals/${a.id}`)).html, 'same-scope')).toBe('');
    const single = [await payout('Acme Pair'), await payout('Acme Pair')];
    expect(text(part((await client.get(`/proposals/${single[0]!.id}`)).html, 'same-scope'))).toContain(
      '1 other pending proposal has the same scope',
    );
  });

  it('compares the approved scope with the requested scope and shows the contract on its own', async () => {
    const invoice = freshInvoice(h.world, 'acme');
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: invoice },
      resource: `invoice:${invoice}`,
    });
    const client = await signedIn();
    await client.post(`/proposals/${p.id}/approve`, { digest: p.digest, csrf: await client.csrf() });
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('succeeded');
    const stored = await h.engine.proposals.get('acme', p.id);
    const scope = stored!.scopeDigest.slice(0, 12);
    const page = await client.get(`/proposals/${p.id}`);
    const command = part(page.html, 'data-step="command"');
    expect(text(command)).toContain(`approved scope ${scope} = requested scope ${scope} ✓`);
    expect(text(command)).toContain(`contract ${p.short}`);
    // The contract hash is never put beside the scope hash as if the two should match.
    expect(text(command)).not.toContain(`approved ${p.short}`);
    expect(command).not.toContain('Approved scope');
    const approval = text(part(page.html, 'data-step="approved"'));
    expect(approval).toContain(`seen contract ${p.short} = contract ${p.short} ✓`);
  });
});
