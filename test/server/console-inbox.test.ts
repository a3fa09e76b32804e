import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INBOX_SCRIPT } from '../../src/server/console/inbox-script.js';
import { ConsoleClient } from './support/console-client.js';
import { HOSTILE, hostileOperation } from './support/hostile-operation.js';
import { call, freshInvoice, type ServerHarness, serverHarness } from './support/server-harness.js';

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({ extraOperations: [hostileOperation], limits: false });
});
afterAll(async () => {
  await h.close();
});

type Proposed = { id: string; digest: string; short: string };

/** An agent of acme (or globex) with its own name, so each test lists only its own proposals. */
async function agent(name: string, tenant: 'acme' | 'globex' = 'acme') {
  const token = await h.directory.issueAgentToken({ tenant, agent: name });
  const propose = async (operation: string, request: unknown): Promise<Proposed> => {
    const response = await call(h, 'POST', '/api/v1/proposals', {
      token,
      body: {
        runId: `run-${name}`,
        operation,
        request,
        ...(operation === 'test.hostile' ? { resource: `note:${name}` } : {}),
      },
    });
    if (response.status !== 201)
      throw new Error(`propose: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as Proposed;
  };
  return {
    id: `agent:${tenant}-${name}`,
    pay: (dueMinor = 24_049) =>
      propose('invoice.pay', { invoice_id: freshInvoice(h.world, tenant, dueMinor) }),
    say: (text: string) => propose('test.hostile', { text }),
  };
}

async function signedIn(tenant: 'acme' | 'globex' = 'acme') {
  const client = new ConsoleClient(h.url);
  const op = h.tenants[tenant].operators.approver;
  expect((await client.login(op.email, op.password)).status).toBe(303);
  return client;
}

/** The proposal ids of the listed rows, in order. */
function listed(html: string): string[] {
  return [
    ...html.matchAll(
      /<tr data-inbox-row(?:="")?[^>]*>\s*<td class="summary"><a data-open(?:="")? href="\/proposals\/(prp_[0-9a-z]+)"/g,
    ),
  ].map((m) => m[1]!);
}

function row(html: string, id: string): string {
  const start = html.indexOf(`href="/proposals/${id}"`);
  expect(start).toBeGreaterThan(-1);
  return html.slice(start, html.indexOf('</tr>', start));
}

function tabCount(html: string, tab: string): number {
  const match = new RegExp(`data-testid="tab-${tab}"[^>]*>[^<]*<span class="count">(\\d+)</span>`).exec(html);
  expect(match, `tab ${tab}`).not.toBeNull();
  return Number(match![1]);
}

function nextHref(html: string): string | undefined {
  const match = /<a rel="next" href="([^"]+)"/.exec(html);
  return match ? match[1]!.replace(/&amp;/g, '&') : undefined;
}

const q = (params: Record<string, string>) => `/?${new URLSearchParams(params).toString()}`;

describe('the inbox counts', () => {
  it('counts every proposal, not a page: 67 pending with pages of 50 says 67, and the next page keeps the filter', async () => {
    const bulk = await agent('bulk');
    const made: string[] = [];
    for (let i = 0; i < 67; i++) made.push((await bulk.pay(1_000 + i)).id);
    // Another tenant's proposals by an agent of the same name are never counted or listed.
    const foreign = await agent('bulk', 'globex');
    for (let i = 0; i < 3; i++) await foreign.pay();
    const client = await signedIn();
    const first = await client.get(q({ requester: bulk.id }));
    expect(first.status).toBe(200);
    expect(tabCount(first.html, 'pending')).toBe(67);
    // An approver's inbox opens on "Needs you": every one of these is theirs to decide.
    expect(tabCount(first.html, 'needs')).toBe(67);
    expect(first.html).toContain('67 proposals matching the filters need your decision.');
    expect(listed(first.html)).toHaveLength(50);
    const next = nextHref(first.html);
    expect(next).toContain(`requester=${encodeURIComponent(bulk.id)}`);
    const second = await client.get(next!);
    expect(tabCount(second.html, 'pending')).toBe(67);
    expect(listed(second.html)).toHaveLength(17);
    expect(nextHref(second.html)).toBeUndefined();
    expect([...listed(first.html), ...listed(second.html)].sort()).toEqual([...made].sort());
    // globex sees its own three under the same requester name, never acme's 67.
    const globex = await (await signedIn('globex')).get(q({ requester: 'agent:globex-bulk' }));
    expect(tabCount(globex.html, 'pending')).toBe(3);
    expect(listed(globex.html).some((id) => made.includes(id))).toBe(false);
  });

  it('has tabs for needs reconciliation and recently decided, with their totals, kept across filters', async () => {
    const a = await agent('tabs');
    const lost = await a.pay();
    const declined = await a.pay();
    const waiting = await a.pay();
    const stored = await h.engine.proposals.get('acme', lost.id);
    const invoice = (stored?.request as { invoice_id?: string } | undefined)?.invoice_id;
    expect(invoice).toBeTruthy();
    h.world.provider.failWhen((r) => r.reference === invoice, 'timeout_after_commit');
    const approver = h.tenants.acme.operators.approver.token;
    expect(
      (
        await call(h, 'POST', `/api/v1/proposals/${lost.id}/approve`, {
          token: approver,
          body: { seenDigest: lost.digest },
        })
      ).status,
    ).toBe(200);
    expect(
      (await call(h, 'POST', `/api/v1/proposals/${declined.id}/decline`, { token: approver, body: {} }))
        .status,
    ).toBe(200);
    const client = await signedIn();
    const pending = await client.get(q({ requester: a.id }));
    expect([
      tabCount(pending.html, 'pending'),
      tabCount(pending.html, 'needs_reconciliation'),
      tabCount(pending.html, 'recent'),
    ]).toEqual([1, 1, 1]);
    expect(listed(pending.html)).toEqual([waiting.id]);
    const reconcile = await client.get(q({ requester: a.id, status: 'needs_reconciliation' }));
    expect(listed(reconcile.html)).toEqual([lost.id]);
    expect(reconcile.html).toMatch(/data-testid="tab-needs_reconciliation" aria-current="page"/);
    expect(reconcile.html).toContain(`href="/?status=recent&amp;requester=${encodeURIComponent(a.id)}"`);
    const recent = await client.get(q({ requester: a.id, status: 'recent' }));
    expect(listed(recent.html)).toEqual([declined.id]);
    // An API status name lists that status.
    expect(listed((await client.get(q({ requester: a.id, status: 'declined' }))).html)).toEqual([
      declined.id,
    ]);
    // A day later the decline is no longer recent.
    h.clock.advance(25 * 60 * 60_000);
    expect(tabCount((await (await signedIn()).get(q({ requester: a.id }))).html, 'recent')).toBe(0);
  });
});

describe('the inbox filters and search', () => {
  it('filters by operation and by requester, in the store query', async () => {
    const a = await agent('filter-a');
    const b = await agent('filter-b');
    const payA = await a.pay();
    const sayA = await a.say('Note from filter-a');
    const payB = await b.pay();
    const client = await signedIn();
    expect(listed((await client.get(q({ requester: a.id }))).html).sort()).toEqual([payA.id, sayA.id].sort());
    expect(listed((await client.get(q({ requester: a.id, operation: 'invoice.pay' }))).html)).toEqual([
      payA.id,
    ]);
    expect(listed((await client.get(q({ requester: a.id, operation: 'test.hostile' }))).html)).toEqual([
      sayA.id,
    ]);
    const byB = await client.get(q({ requester: b.id, operation: 'invoice.pay' }));
    expect(listed(byB.html)).toEqual([payB.id]);
    expect(tabCount(byB.html, 'pending')).toBe(1);
    // The form shows what is applied.
    expect(byB.html).toContain('<option value="invoice.pay" selected="">');
    expect(byB.html).toContain(`name="requester" value="${b.id}"`);
  });

  it('searches by proposal id, short hash and title words; % and _ are literal', async () => {
    const a = await agent('search');
    const percent = await a.say('Refund 100% to Acme_Co');
    const plain = await a.say('Refund 1000 to AcmeXCo');
    const other = await a.say('Send the quarterly report');
    const client = await signedIn();
    const search = async (text: string) =>
      listed((await client.get(q({ requester: a.id, q: text }))).html).sort();
    expect(await search(plain.id)).toEqual([plain.id]);
    expect(await search(other.short)).toEqual([other.id]);
    expect(await search('QUARTERLY')).toEqual([other.id]);
    expect(await search('refund')).toEqual([percent.id, plain.id].sort());
    expect(await search('100%')).toEqual([percent.id]);
    expect(await search('acme_co')).toEqual([percent.id]);
    expect(await search('%')).toEqual([percent.id]);
    expect(await search('_')).toEqual([percent.id]);
    expect(await search("' OR 1=1 --")).toEqual([]);
    const page = await client.get(q({ requester: a.id, q: 'refund' }));
    expect(tabCount(page.html, 'pending')).toBe(2);
    expect(page.html).toContain('2 proposals matching the filters need your decision.');
    expect(page.html).toContain('id="inbox-q" name="q" value="refund"');
  });
});

describe('the inbox order', () => {
  it('sorts by age, time left and amount, and pages each order completely', async () => {
    const a = await agent('sorts');
    const small = await a.pay(500);
    h.clock.advance(60_000);
    const large = await a.pay(90_000);
    h.clock.advance(60_000);
    const middle = await a.pay(7_000);
    const client = await signedIn();
    const order = async (sort: string) => listed((await client.get(q({ requester: a.id, sort }))).html);
    expect(await order('created')).toEqual([middle.id, large.id, small.id]);
    expect(listed((await client.get(q({ requester: a.id }))).html)).toEqual([middle.id, large.id, small.id]);
    expect(await order('expires')).toEqual([small.id, large.id, middle.id]);
    expect(await order('amount')).toEqual([large.id, middle.id, small.id]);
    const page = await client.get(q({ requester: a.id, sort: 'amount' }));
    expect(page.html).toContain('<option value="amount" selected="">');
  });

  it('keeps every parameter in the next-page link, and pages by time left without gaps or repeats', async () => {
    const a = await agent('pages');
    const made: string[] = [];
    for (let i = 0; i < 55; i++) {
      made.push((await a.pay(100 + i)).id);
      h.clock.advance(1_000);
    }
    const client = await signedIn();
    const first = await client.get(
      q({ requester: a.id, sort: 'expires', operation: 'invoice.pay', q: 'northwind' }),
    );
    expect(listed(first.html)).toEqual(made.slice(0, 50));
    const next = nextHref(first.html)!;
    const params = new URL(next, h.url).searchParams;
    expect([params.get('requester'), params.get('sort'), params.get('operation'), params.get('q')]).toEqual([
      a.id,
      'expires',
      'invoice.pay',
      'northwind',
    ]);
    expect(params.get('cursor')).toBeTruthy();
    const second = await client.get(next);
    expect(listed(second.html)).toEqual(made.slice(50));
    expect(second.html).toContain('← First page');
  });

  it('answers an unknown sort or status with a 400 page that names the parameter', async () => {
    const client = await signedIn();
    const sort = await client.get('/?sort=risk');
    expect(sort.status).toBe(400);
    expect(sort.html).toContain('the <code>sort</code> parameter is not valid');
    expect(sort.html).toContain('sort must be expires, created or amount');
    const status = await client.get('/?status=waiting');
    expect(status.status).toBe(400);
    expect(status.html).toContain('the <code>status</code> parameter is not valid');
    const long = await client.get(`/?q=${'x'.repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.html).toContain('the <code>q</code> parameter is not valid');
  });
});

describe('the inbox rows', () => {
  it('shows the amount and the destination as the operation redacts it', async () => {
    const a = await agent('rows');
    const paid = await a.pay(1_250_000);
    const client = await signedIn();
    const html = (await client.get(q({ requester: a.id }))).html;
    const line = row(html, paid.id);
    expect(line).toContain('<data value="1250000">12,500.00 USD</data>');
    // destination_account_id is redacted with last4 by invoice.pay: only its end shows.
    expect(line).toContain('…er-7');
    expect(line).not.toContain('acct-supplier-7');
  });

  it('escapes model-produced titles and destinations', async () => {
    const a = await agent('hostile');
    const said = await a.say(HOSTILE.script);
    const client = await signedIn();
    const html = (await client.get(q({ requester: a.id }))).html;
    const line = row(html, said.id);
    expect(line).not.toContain('<script>');
    expect(line).not.toContain('<img');
    expect(line).toContain('&lt;script&gt;');
    expect(html).not.toContain(HOSTILE.attribute);
  });

  it('loads the keyboard script under the CSP nonce from a hashed path, with the help it toggles', async () => {
    const client = await signedIn();
    const page = await client.get('/');
    const csp = page.response.headers.get('content-security-policy') ?? '';
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(page.html).toContain(`<script nonce="${nonce}" src="${INBOX_SCRIPT.path}" defer=""></script>`);
    expect(page.html).toContain('id="inbox-keys" role="region" aria-label="Keyboard shortcuts" hidden');
    const script = await client.get(INBOX_SCRIPT.path);
    expect(script.status).toBe(200);
    expect(script.response.headers.get('content-type')).toContain('javascript');
    expect(script.html).toContain("e.key === 'j'");
    // No key approves: the script never posts a form or touches an approve button.
    expect(script.html).not.toMatch(/approve|submit|fetch\(|XMLHttpRequest/);
  });
});

describe('"Needs you"', () => {
  async function signedInAs(role: 'approver' | 'admin' | 'viewer') {
    const client = new ConsoleClient(h.url);
    const op = h.tenants.acme.operators[role];
    expect((await client.login(op.email, op.password)).status).toBe(303);
    return client;
  }
  const approveAs = (role: 'approver' | 'admin', p: Proposed) =>
    call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token: h.tenants.acme.operators[role].token,
      body: { seenDigest: p.digest },
    });

  it("is an approver's home view with its count; a first approval of two leaves it, marked in Pending, and stays in the other approver's", async () => {
    const a = await agent('quorum');
    const big = await a.pay(1_250_000);
    const small = await a.pay();
    const approverInbox = await signedInAs('approver');
    const home = await approverInbox.get(q({ requester: a.id }));
    expect(home.html).toMatch(/data-testid="tab-needs" aria-current="page"/);
    expect(tabCount(home.html, 'needs')).toBe(2);
    expect(listed(home.html)).toEqual([small.id, big.id]);

    expect((await approveAs('approver', big)).status).toBe(202);
    const after = await approverInbox.get(q({ requester: a.id }));
    expect(tabCount(after.html, 'needs')).toBe(1);
    expect(tabCount(after.html, 'pending')).toBe(2);
    expect(after.html).toContain('1 proposal matching the filters needs your decision.');
    expect(listed(after.html)).toEqual([small.id]);
    const pending = await approverInbox.get(q({ requester: a.id, status: 'pending' }));
    expect(listed(pending.html)).toEqual([small.id, big.id]);
    expect(row(pending.html, big.id)).toContain('You approved (1 of 2) · waiting for another approver');
    expect(row(pending.html, small.id)).not.toContain('data-testid="your-part"');
    // The other approver (an admin) still has it to decide, unmarked.
    const adminInbox = await signedInAs('admin');
    const theirs = await adminInbox.get(q({ requester: a.id }));
    expect(listed(theirs.html)).toEqual([small.id, big.id]);
    expect(row(theirs.html, big.id)).not.toContain('You approved');
  });

  it('an edit leaves its editor\'s view, marked "Edited by you"; a viewer keeps Pending as home and has no such tab', async () => {
    const token = await h.directory.issueAgentToken({ tenant: 'acme', agent: 'drafts' });
    const proposed = await call(h, 'POST', '/api/v1/proposals', {
      token,
      body: {
        runId: 'run-drafts',
        operation: 'email_broadcast.apply_draft',
        request: { broadcast_id: 'bc-spring', subject: 'Season opens', body: 'See you Saturday.' },
      },
    });
    expect(proposed.status).toBe(201);
    const edited = await call(h, 'POST', `/api/v1/proposals/${String(proposed.body['id'])}/edit`, {
      token: h.tenants.acme.operators.approver.token,
      body: { changes: { subject: 'Season opens Saturday' } },
    });
    expect(edited.status).toBe(201);
    const id = String(edited.body['id']);
    const filter = { requester: 'agent:acme-drafts' };
    const editor = await signedInAs('approver');
    expect(listed((await editor.get(q(filter))).html)).toEqual([]);
    const pending = await editor.get(q({ ...filter, status: 'pending' }));
    expect(listed(pending.html)).toEqual([id]);
    expect(row(pending.html, id)).toContain('Edited by you · waiting for another approver');
    expect(listed((await (await signedInAs('admin')).get(q(filter))).html)).toEqual([id]);
    const viewer = await (await signedInAs('viewer')).get(q(filter));
    expect(viewer.html).toMatch(/data-testid="tab-pending" aria-current="page"/);
    expect(viewer.html).not.toContain('data-testid="tab-needs"');
  });

  it('answers the live inbox whether one proposal belongs in the list of a query string, for this operator only', async () => {
    const a = await agent('match');
    const p = await a.pay();
    const client = await signedIn();
    const match = async (query: string) => {
      const response = await client.get(`/inbox/match?${query}`);
      expect(response.status).toBe(200);
      return (JSON.parse(response.html) as { match: boolean }).match;
    };
    expect(await match(`id=${p.id}`)).toBe(true);
    expect(await match(`status=pending&id=${p.id}`)).toBe(true);
    expect(await match(`requester=${encodeURIComponent(a.id)}&id=${p.id}`)).toBe(true);
    expect(await match(`requester=agent%3Aacme-other&id=${p.id}`)).toBe(false);
    expect(await match(`operation=email_broadcast.apply_draft&id=${p.id}`)).toBe(false);
    expect(await match(`q=${p.short}&id=${p.id}`)).toBe(true);
    expect(await match(`q=nothing-like-it&id=${p.id}`)).toBe(false);
    expect(await match(`status=recent&id=${p.id}`)).toBe(false);
    // Another tenant's proposal matches nothing here, like a missing one.
    const foreign = await (await agent('match', 'globex')).pay();
    expect(await match(`status=pending&id=${foreign.id}`)).toBe(false);
    expect((await client.get('/inbox/match?id=nope')).status).toBe(422);
    expect((await new ConsoleClient(h.url).get(`/inbox/match?id=${p.id}`)).status).toBe(401);
  });
});
