import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, hidden } from '../support/console-client.js';
import { call, type Role, type ServerHarness, serverHarness } from '../support/server-harness.js';

let h: ServerHarness;
let plain: ServerHarness;
beforeAll(async () => {
  [h, plain] = await Promise.all([serverHarness({ slack: true }), serverHarness()]);
});
afterAll(async () => {
  await Promise.all([h?.close(), plain?.close()]);
});

const reasonOf = (html: string) => /class="reason-code">([^<]+)</.exec(html)?.[1];

async function consoleAs(harness: ServerHarness, role: Role): Promise<ConsoleClient> {
  const { email, password } = harness.tenants.acme.operators[role];
  const client = new ConsoleClient(harness.url);
  expect((await client.login(email, password)).status).toBe(303);
  return client;
}

async function slackAuditOf(slackUser: string) {
  const { events } = await h.engine.audit.since('acme', { afterSeq: 0, limit: 1000 });
  return events
    .filter((e) => JSON.stringify(e.detail['slackUser'] ?? null).includes(`"${slackUser}"`))
    .map((e) => [e.step, e.actor, e.detail]);
}

describe('the Slack console page', () => {
  it('is for admins: in their navigation; others forbidden, the signed-out sent to sign-in', async () => {
    const admin = await consoleAs(h, 'admin');
    expect((await admin.get('/')).html).toContain('href="/slack"');
    const page = await admin.get('/slack');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<h1>Slack</h1>');
    expect(page.html).toContain('aria-current="page">Slack</a>');

    const approver = await consoleAs(h, 'approver');
    expect((await approver.get('/')).html).not.toContain('href="/slack"');
    const refused = await approver.get('/slack');
    expect([refused.status, reasonOf(refused.html)]).toEqual([403, 'forbidden']);
    const posted = await approver.post('/slack/users', {
      csrf: await approver.csrf(),
      slackUser: 'U0APPROVER',
      email: 'approver@acme.test',
    });
    expect([posted.status, reasonOf(posted.html)]).toEqual([403, 'forbidden']);

    const anonymous = await new ConsoleClient(h.url).get('/slack');
    expect([anonymous.status, anonymous.response.headers.get('location')]).toEqual([
      303,
      '/login?next=%2Fslack',
    ]);
    expect(await slackAuditOf('U0APPROVER')).toEqual([]);
  });

  it('links a Slack user (listed, audited, the same link the API sees), refuses bad input with its reason, removes it', async () => {
    const admin = await consoleAs(h, 'admin');
    const csrf = hidden((await admin.get('/slack')).html, 'csrf');
    const link = (slackUser: string, email: string, fields: Record<string, string> = {}) =>
      admin.post('/slack/users', { csrf, slackUser, email, ...fields });

    const linked = await link(' U0LINKED1 ', 'APPROVER@acme.test');
    expect([linked.status, linked.location]).toEqual([303, '/slack']);
    const listed = await admin.get('/slack');
    expect(listed.html).toContain('Saved.');
    const table = listed.html.slice(listed.html.indexOf('<table'), listed.html.indexOf('</table>'));
    expect(table).toContain('U0LINKED1');
    expect(table).toContain('approver@acme.test');
    expect(table).toContain('user:admin@acme.test');
    expect(table).toMatch(/<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/);
    expect(table).toContain('aria-label="Remove the link of U0LINKED1"');
    // The flash is shown once.
    expect((await admin.get('/slack')).html).not.toContain('Saved.');
    const api = await call(h, 'GET', '/api/v1/slack/users', {
      token: h.tenants.acme.operators.admin.token,
    });
    expect(api.body['links']).toMatchObject([
      { slackUser: 'U0LINKED1', email: 'approver@acme.test', linkedBy: 'user:admin@acme.test' },
    ]);
    // Another tenant sees none of it.
    const globex = await call(h, 'GET', '/api/v1/slack/users', {
      token: h.tenants.globex.operators.admin.token,
    });
    expect(globex.body['links']).toEqual([]);

    const badId = await link('<b>not-an-id</b>', 'approver@acme.test');
    expect([badId.status, reasonOf(badId.html)]).toEqual([422, 'invalid_request']);
    expect(badId.html).toContain('$.slackUser: a Slack user id like U012ABCDEF');
    expect(badId.html).not.toContain('<b>not-an-id</b>');
    const tooLong = await link('U0LINKED2', `${'a'.repeat(320)}@acme.test`);
    expect([tooLong.status, reasonOf(tooLong.html)]).toEqual([422, 'invalid_request']);
    expect(tooLong.html).toContain('$.email: an email of 3 to 320 characters');
    const unknown = await link('U0LINKED2', 'nobody@acme.test');
    expect([unknown.status, reasonOf(unknown.html)]).toEqual([404, 'not_found']);
    expect(unknown.html).toContain('no operator of this tenant has that email');
    const foreign = await link('U0LINKED2', 'approver@globex.test');
    expect([foreign.status, reasonOf(foreign.html)]).toEqual([404, 'not_found']);
    // The refused page still lists the links.
    expect(foreign.html).toContain('aria-label="Remove the link of U0LINKED1"');

    const forged = await link('U0LINKED2', 'viewer@acme.test', { csrf: 'x'.repeat(64) });
    expect([forged.status, reasonOf(forged.html)]).toEqual([403, 'cross_site_request']);
    const crossSite = await admin.post(
      '/slack/users',
      { csrf, slackUser: 'U0LINKED2', email: 'viewer@acme.test' },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    );
    expect([crossSite.status, reasonOf(crossSite.html)]).toEqual([403, 'cross_site_request']);
    const extra = await link('U0LINKED2', 'viewer@acme.test', { linkedBy: 'user:someone@acme.test' });
    expect([extra.status, reasonOf(extra.html)]).toEqual([400, 'invalid_form']);
    expect(await slackAuditOf('U0LINKED2')).toEqual([]);

    const removed = await admin.post('/slack/users/U0LINKED1/delete', { csrf });
    expect([removed.status, removed.location]).toEqual([303, '/slack']);
    const after = await admin.get('/slack');
    expect(after.html).toContain('Saved.');
    expect(after.html).toContain('No links:');
    expect(after.html).not.toContain('U0LINKED1');
    const again = await admin.post('/slack/users/U0LINKED1/delete', { csrf });
    expect([again.status, reasonOf(again.html)]).toEqual([404, 'not_found']);

    expect(await slackAuditOf('U0LINKED1')).toEqual([
      [
        'operator_changed',
        'user:admin@acme.test',
        { operator: 'approver@acme.test', slackUser: { id: 'U0LINKED1', linked: true } },
      ],
      [
        'operator_changed',
        'user:admin@acme.test',
        { operator: 'approver@acme.test', slackUser: { id: 'U0LINKED1', linked: false } },
      ],
    ]);
  });

  it('is absent without Slack configured: not in the navigation, and no such page', async () => {
    const admin = await consoleAs(plain, 'admin');
    const inbox = await admin.get('/');
    expect(inbox.html).toContain('href="/routing"');
    expect(inbox.html).not.toContain('href="/slack"');
    expect((await admin.get('/slack')).status).toBe(404);
  });
});
