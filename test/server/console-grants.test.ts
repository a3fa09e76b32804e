import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from './support/console-client.js';
import { type ServerHarness, serverHarness } from './support/server-harness.js';

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness();
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

const form = (csrf: string, overrides: Record<string, string> = {}) => ({
  csrf,
  subject: 'agent:acme-assistant',
  operations: 'invoice.pay',
  resource: 'invoice:*',
  constraints: '{"amount_minor":{"max":10000},"currency":{"equals":"USD"}}',
  capField: 'amount_minor',
  capTotal: '30000',
  capUses: '',
  expiresAt: new Date(h.clock.now() + 3_600_000).toISOString().slice(0, 16),
  note: 'support shift <b>cover</b>',
  ...overrides,
});

describe('the grants page', () => {
  it('an admin creates a grant from stated bounds, sees its usage and revokes it', async () => {
    const admin = await signedIn('admin');
    const csrf = await admin.csrf();
    const created = await admin.post('/grants', form(csrf));
    expect(created.status).toBe(303);
    expect(created.location).toBe('/grants');
    const page = await admin.get(created.location!);
    expect(page.html).toContain('Grant created.');
    expect(page.html).toContain('agent:acme-assistant');
    expect(page.html).toContain('0 of 30000 amount_minor');
    const id = /(grt_[0-9a-z]{26})/.exec(page.html)?.[1];
    expect(id).toBeDefined();
    const revoked = await admin.post(`/grants/${id}/revoke`, { csrf });
    expect(revoked.location).toBe('/grants');
    expect((await admin.get('/grants')).html).toMatch(/badge expired">revoked/);
  });

  it('a grant cannot stand in for a two-person approval: the form offers no such option and refuses one posted', async () => {
    const admin = await signedIn('admin');
    const csrf = await admin.csrf();
    expect((await admin.get('/grants')).html).not.toContain('satisfiesQuorum');
    const before = (await h.engine.grants.list('acme')).length;
    const posted = await admin.post('/grants', form(csrf, { satisfiesQuorum: 'yes' }));
    expect(posted.status).toBe(400);
    expect(posted.html).toContain('invalid_form');
    expect(await h.engine.grants.list('acme')).toHaveLength(before);
  });

  it('problems are named on the page and the form keeps what was typed, escaped', async () => {
    const admin = await signedIn('admin');
    const csrf = await admin.csrf();
    const bad = await admin.post(
      '/grants',
      form(csrf, {
        constraints: '{"colour":{"equals":"red"}}',
        resource: '*',
        note: '"><script>alert(1)</script>',
      }),
    );
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('$.constraints.colour: not a scope field of invoice.pay');
    expect(bad.html).toContain('$.resource');
    expect(bad.html).not.toContain('<script>alert(1)</script>');
    expect(bad.html).toContain('&lt;script&gt;');
    const json = await admin.post('/grants', form(csrf, { constraints: '{"a":1,"a":2}' }));
    expect(json.status).toBe(422);
    expect(json.html).toContain('$.constraints: invalid JSON (duplicate_key)');
  });

  // Keys named like Object.prototype members once reached `shape[field]` and answered 500.
  it.each(['constructor', 'toString', 'valueOf', '__proto__'])(
    'a bound or cap on "%s" is refused on the page as not a scope field, never 500',
    async (name) => {
      const admin = await signedIn('admin');
      const csrf = await admin.csrf();
      const before = (await h.engine.grants.list('acme')).length;
      const bound = await admin.post('/grants', form(csrf, { constraints: `{"${name}":{"max":5}}` }));
      expect(bound.status).toBe(422);
      expect(bound.html).toContain('The grant was not created.');
      expect(bound.html).toContain(`$.constraints.${name}: not a scope field of invoice.pay`);
      const capped = await admin.post('/grants', form(csrf, { capField: name }));
      expect(capped.status).toBe(422);
      expect(capped.html).toContain(`$.cap.field: ${name} is not a numeric scope field of invoice.pay`);
      expect(await h.engine.grants.list('acme')).toHaveLength(before);
    },
  );

  it('an approver sees grants but cannot create or revoke; a cross-site post is refused', async () => {
    const existing = (await h.engine.grants.list('acme')).length;
    const approver = await signedIn('approver');
    const csrf = await approver.csrf();
    const page = await approver.get('/grants');
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('Create grant');
    const attempt = await approver.post('/grants', form(csrf));
    expect(attempt.status).toBe(403);
    expect(attempt.html).toContain('Only an admin creates grants.');
    const admin = await signedIn('admin');
    const cross = await admin.post('/grants', form(await admin.csrf()), {
      origin: 'https://evil.test',
      'sec-fetch-site': 'cross-site',
    });
    expect(cross.status).toBe(403);
    expect(await h.engine.grants.list('acme')).toHaveLength(existing);
  });
});
