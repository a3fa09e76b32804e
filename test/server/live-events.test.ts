import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStreams } from '../../src/server/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/engine.js';
import { testPostgres } from '../support/postgres.js';
import { ConsoleClient } from './support/console-client.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';
import { openSse, type SseStream } from './support/sse-client.js';

const pg = testPostgres();
const files = tempDir();
afterAll(async () => {
  await pg.cleanup();
  files.cleanup();
});

const pay = (invoice: string) => ({
  operation: 'invoice.pay',
  request: { invoice_id: invoice },
  resource: `invoice:${invoice}`,
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const backends: [string, () => Promise<Store>][] = [
  ['SQLite', async () => new SqliteStore({ path: `${files.dir}/live-${Date.now()}.db` })],
  [`PostgreSQL (${pg.label})`, () => pg.store()],
];

describe.each(backends)('GET /api/v1/events over %s', (_name, openStore) => {
  let h: ServerHarness;
  const streams = new EventStreams({ pollMs: 40, heartbeatMs: 300, maxPerPrincipal: 2 });
  const open: SseStream[] = [];
  const events = async (headers: Record<string, string>) => {
    const stream = await openSse(h.url, '/api/v1/events', headers);
    open.push(stream);
    return stream;
  };

  beforeAll(async () => {
    h = await serverHarness({ store: await openStore(), events: streams });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    // Let the handlers see the disconnects before the store closes.
    for (let i = 0; i < 100 && streams.open > 0; i++) await new Promise((r) => setTimeout(r, 20));
    await h.close();
  });

  it('streams proposal.created, proposal.decided and proposal.outcome as another client proposes and approves', async () => {
    const stream = await events(bearer(h.tenants.acme.operators.viewer.token));
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toBe('no-store');

    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const created = await stream.nextEvent();
    expect(created.event).toBe('proposal.created');
    const preview = proposed['preview'] as { title: string };
    expect(JSON.parse(created.data)).toEqual({
      proposalId: proposed.id,
      operation: 'invoice.pay',
      status: 'pending',
      short: proposed.short,
      title: preview.title,
      at: proposed['createdAt'],
    });

    const approved = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      body: { seenDigest: proposed.digest },
    });
    expect(approved.status).toBe(200);
    const decided = await stream.nextEvent();
    const outcome = await stream.nextEvent();
    expect([decided.event, outcome.event]).toEqual(['proposal.decided', 'proposal.outcome']);
    expect(JSON.parse(decided.data)).toMatchObject({ proposalId: proposed.id, status: 'approved' });
    expect(JSON.parse(outcome.data)).toMatchObject({ proposalId: proposed.id, status: 'succeeded' });
    const ids = [created, decided, outcome].map((e) => Number(e.id));
    expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true);
    expect(ids[1]).toBeGreaterThan(ids[0]!);
    expect(ids[2]).toBeGreaterThan(ids[1]!);
    // The ids are the audit chain's seqs: the proposal's own audit names them.
    const audit = await call(h, 'GET', `/api/v1/proposals/${proposed.id}/audit`, {
      token: h.tenants.acme.operators.viewer.token,
    });
    const seqs = new Map(
      (audit.body['events'] as { seq: number; step: string }[]).map((e) => [e.step, e.seq]),
    );
    expect(ids).toEqual([seqs.get('proposed'), seqs.get('approved'), seqs.get('outcome')]);
    // The redacted destination never leaves in an event.
    expect(`${created.data}${decided.data}${outcome.data}`).not.toContain('acct-supplier-7');
    stream.close();
  });

  it('resumes after Last-Event-ID with exactly the events after it, then only new ones', async () => {
    const watcher = await events(bearer(h.tenants.acme.operators.admin.token));
    const a = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const b = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const declined = await call(h, 'POST', `/api/v1/proposals/${b.id}/decline`, {
      token: h.tenants.acme.operators.approver.token,
      body: { reason: 'not this one' },
    });
    expect(declined.status).toBe(200);
    const seen = [await watcher.nextEvent(), await watcher.nextEvent(), await watcher.nextEvent()];
    expect(seen.map((e) => [e.event, JSON.parse(e.data).proposalId])).toEqual([
      ['proposal.created', a.id],
      ['proposal.created', b.id],
      ['proposal.decided', b.id],
    ]);
    watcher.close();

    const resumed = await events({
      ...bearer(h.tenants.acme.operators.admin.token),
      'last-event-id': seen[0]!.id!,
    });
    expect(resumed.status).toBe(200);
    const replay = [await resumed.nextEvent(), await resumed.nextEvent()];
    expect(replay.map((e) => e.id)).toEqual([seen[1]!.id, seen[2]!.id]);
    expect(JSON.parse(replay[1]!.data)).toMatchObject({ proposalId: b.id, status: 'declined' });
    // Nothing else was owed: the next thing on the quiet stream is a heartbeat comment.
    expect(await resumed.next(2000)).toEqual({ kind: 'comment', text: 'heartbeat' });
    const c = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const live = await resumed.nextEvent();
    expect(JSON.parse(live.data)).toMatchObject({ proposalId: c.id, status: 'pending' });
    expect(Number(live.id)).toBeGreaterThan(Number(seen[2]!.id));
    resumed.close();
  });

  it("never sends another tenant's events", async () => {
    const acme = await events(bearer(h.tenants.acme.operators.viewer.token));
    const globex = await events(bearer(h.tenants.globex.operators.viewer.token));
    const fromAcme = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const fromGlobex = await proposeViaApi(h, 'globex', pay(freshInvoice(h.world, 'globex')));
    const fromAcme2 = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const acmeSaw = [await acme.nextEvent(), await acme.nextEvent()].map(
      (e) => JSON.parse(e.data).proposalId,
    );
    expect(acmeSaw).toEqual([fromAcme.id, fromAcme2.id]);
    const globexSaw = await globex.nextEvent();
    expect(JSON.parse(globexSaw.data).proposalId).toBe(fromGlobex.id);
    // Globex's quiet stream owes nothing more: its next message is a heartbeat.
    expect(await globex.next(2000)).toEqual({ kind: 'comment', text: 'heartbeat' });
    // A resume point from another tenant's (longer) chain starts at this tenant's head.
    const resumedGlobex = await events({
      ...bearer(h.tenants.globex.operators.admin.token),
      'last-event-id': '999999',
    });
    expect(await resumedGlobex.next(2000)).toEqual({ kind: 'comment', text: 'heartbeat' });
    for (const s of [acme, globex, resumedGlobex]) s.close();
  });

  it('serves a console session too, and refuses agents, anonymous callers and a malformed Last-Event-ID with their reason codes', async () => {
    const op = h.tenants.acme.operators.approver;
    const browser = new ConsoleClient(h.url);
    await browser.login(op.email, op.password);
    const session = await events({ cookie: browser.cookieHeader });
    expect(session.status).toBe(200);
    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    expect(JSON.parse((await session.nextEvent()).data).proposalId).toBe(proposed.id);
    session.close();

    const agent = await events(bearer(h.tenants.acme.agentToken));
    expect([agent.status, agent.problem?.['reason']]).toEqual([403, 'forbidden']);
    const anonymous = await events({});
    expect([anonymous.status, anonymous.problem?.['reason']]).toEqual([401, 'unauthenticated']);
    const forged = await events(bearer('not-a-token'));
    expect([forged.status, forged.problem?.['reason']]).toEqual([401, 'unauthenticated']);
    const malformed = await events({
      ...bearer(h.tenants.acme.operators.viewer.token),
      'last-event-id': 'seq-4',
    });
    expect([malformed.status, malformed.problem?.['reason']]).toEqual([422, 'invalid_request']);
    const query = await openSse(
      h.url,
      '/api/v1/events?tenant=globex',
      bearer(h.tenants.acme.operators.viewer.token),
    );
    expect([query.status, query.problem?.['reason']]).toEqual([422, 'invalid_request']);
  });

  it('caps open streams per principal with rate_limited, and frees the slot (and its polling) when a client leaves', async () => {
    await expect.poll(() => streams.open).toBe(0);
    const token = h.tenants.globex.operators.approver.token;
    const first = await events(bearer(token));
    const second = await events(bearer(token));
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await events(bearer(token));
    expect([third.status, third.problem?.['reason']]).toEqual([429, 'rate_limited']);
    expect(third.headers.get('retry-after')).toBe('3');
    // Another principal of the tenant has its own slots.
    const colleague = await events(bearer(h.tenants.globex.operators.viewer.token));
    expect(colleague.status).toBe(200);
    expect(streams.open).toBe(3);

    first.close();
    await expect.poll(() => streams.open).toBe(2);
    const again = await events(bearer(token));
    expect(again.status).toBe(200);
    for (const s of [second, colleague, again]) s.close();
    // Every handler ended: no stream keeps polling the store for a client that left.
    await expect.poll(() => streams.open).toBe(0);
  });
});

describe("the inbox's live-update script", () => {
  let h: ServerHarness;
  beforeAll(async () => {
    h = await serverHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('is a separate file under its content hash, loaded with the response nonce into an empty polite live region', async () => {
    const op = h.tenants.acme.operators.viewer;
    const browser = new ConsoleClient(h.url);
    await browser.login(op.email, op.password);
    const inbox = await browser.get('/');
    const nonce = /script-src 'nonce-([^']+)'/.exec(
      inbox.response.headers.get('content-security-policy') ?? '',
    )?.[1];
    const tag =
      /<script nonce="([^"]+)" src="(\/assets\/live-inbox\.[0-9a-f]{12}\.js)" defer=""><\/script>/.exec(
        inbox.html,
      );
    expect(tag?.[1]).toBe(nonce);
    expect(inbox.html).toContain(
      '<div id="live-inbox" class="live-inbox" aria-live="polite" aria-atomic="true" data-testid="live-inbox"></div>',
    );
    // Public code: served without a session, cached forever, as JavaScript (nosniff applies).
    const script = await fetch(`${h.url}${tag![2]}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const js = await script.text();
    expect(js).toContain("new EventSource('/api/v1/events')");
    expect(js).not.toContain('innerHTML');
    // Other pages do not load it.
    expect((await browser.get('/history')).html).not.toContain('live-inbox');
  });
});

describe('shutting down with open streams', () => {
  it('ends every stream at once instead of waiting out the drain', async () => {
    const streams = new EventStreams({ pollMs: 40, heartbeatMs: 60_000 });
    const h = await serverHarness({ events: streams });
    const stream = await openSse(h.url, '/api/v1/events', bearer(h.tenants.acme.operators.viewer.token));
    expect(stream.status).toBe(200);
    await expect.poll(() => streams.open).toBe(1);
    const started = Date.now();
    await h.close();
    // The drain allows 10 s; the stream ended well before.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(streams.open).toBe(0);
    await expect(stream.next(1000)).rejects.toThrow('the stream ended');
  });
});
