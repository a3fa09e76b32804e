import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FeedEngine, readLiveEvents } from '../../src/notify/live-feed.js';
import {
  type FeedEnd,
  type FeedItem,
  type FeedSubscription,
  LiveFeedHub,
} from '../../src/server/api/live-feed-hub.js';
import { createCountersignApp, EventStreams } from '../../src/server/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, type BackendName } from '../support/backends.js';
import { tempDir } from '../support/engine.js';
import { testPostgres } from '../support/postgres.js';
import { ConsoleClient } from './support/console-client.js';
import {
  call,
  freshInvoice,
  memoryLogger,
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

/** How each of {@link BACKENDS} opens a fresh store here. */
const openOn: Readonly<Record<BackendName, () => Promise<Store>>> = {
  sqlite: async () => new SqliteStore({ path: `${files.dir}/live-${Date.now()}.db` }),
  postgres: () => pg.store(),
};

describe.each(BACKENDS)('GET /api/v1/events over %s', (backend) => {
  const openStore = openOn[backend];
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
      actor: proposed['requestedBy'],
      approvals: { required: 1, given: 0 },
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
    // And the shared feed let go of them: no subscriber, no timer, no tenant left.
    await expect.poll(() => streams.feeds.tenants).toBe(0);
    expect(streams.feeds).toMatchObject({ tenants: 0, subscribers: 0, timers: 0 });
  });

  it('serves a resume point behind the running shared feed its own backlog once, then the feed, without a repeat', async () => {
    await expect.poll(() => streams.open).toBe(0);
    const live = await events(bearer(h.tenants.acme.operators.viewer.token));
    const proposed = [];
    for (let i = 0; i < 3; i++)
      proposed.push(await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme'))));
    const seen = [await live.nextEvent(), await live.nextEvent(), await live.nextEvent()];
    expect(seen.map((e) => JSON.parse(e.data).proposalId)).toEqual(proposed.map((p) => p.id));
    // The feed has read past seen[0]: the resumed stream must read seen[1..2] for itself.
    const resumed = await events({
      ...bearer(h.tenants.acme.operators.admin.token),
      'last-event-id': seen[0]!.id!,
    });
    const replay = [await resumed.nextEvent(), await resumed.nextEvent()];
    expect(replay.map((e) => e.id)).toEqual([seen[1]!.id, seen[2]!.id]);
    expect(replay.map((e) => e.data)).toEqual([seen[1]!.data, seen[2]!.data]);
    expect(streams.feeds).toMatchObject({ tenants: 1, subscribers: 2 });
    const next = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const [toLive, toResumed] = [await live.nextEvent(), await resumed.nextEvent()];
    expect(JSON.parse(toResumed.data)).toMatchObject({ proposalId: next.id, status: 'pending' });
    expect([toResumed.id, toResumed.data]).toEqual([toLive.id, toLive.data]);
    // Each event came once: the next thing on either quiet stream is a heartbeat.
    expect(await resumed.next(2000)).toEqual({ kind: 'comment', text: 'heartbeat' });
    expect(await live.next(2000)).toEqual({ kind: 'comment', text: 'heartbeat' });
    for (const s of [live, resumed]) s.close();
    await expect.poll(() => streams.feeds.tenants).toBe(0);
  });
});

/** Pulls a subscription's deliveries as its stream would, recording them; `until` waits on them. */
function drain(subscription: FeedSubscription) {
  const seen = { items: [] as FeedItem[], deliveries: 0, end: undefined as FeedEnd | undefined };
  const waiters: (() => void)[] = [];
  const done = (async () => {
    for (;;) {
      const delivery = await subscription.next();
      if (delivery.kind === 'ended') seen.end = delivery.end;
      else {
        seen.items.push(...delivery.items);
        seen.deliveries++;
      }
      for (const wake of waiters.splice(0)) wake();
      if (seen.end) return;
    }
  })();
  const until = async (done: () => boolean) => {
    while (!done()) {
      if (seen.end) throw new Error(`the subscription ended: ${seen.end.kind}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const ids = () => seen.items.map((item) => item.event.data.proposalId);
  return { seen, until, done, ids, release: () => subscription.release() };
}

describe('the shared feed: one reader per tenant, bounded buffers', () => {
  let h: ServerHarness;
  beforeAll(async () => {
    // The drop test proposes until a stream that stops reading is dropped: on a busy machine that
    // takes more than one agent's 30 proposals a minute, which would refuse it rate_limited.
    h = await serverHarness({ limits: false });
  });
  afterAll(async () => {
    await h.close();
  });

  /** The harness's engine, its chain reads and proposal reads counted. */
  const counting = () => {
    const calls = { auditSince: 0, get: 0 };
    const engine: FeedEngine = {
      audit: {
        ...h.engine.audit,
        since: (tenant, input) => {
          calls.auditSince++;
          return h.engine.audit.since(tenant, input);
        },
      },
      proposals: {
        ...h.engine.proposals,
        get: (tenant, id) => {
          calls.get++;
          return h.engine.proposals.get(tenant, id);
        },
      },
      operations: h.engine.operations,
    };
    return { engine, calls };
  };
  const head = async (tenant: string) => (await readLiveEvents(h.engine, tenant, {})).position;
  const never = () => {};

  it('reads the chain once per poll for fifty subscribers, maps and frames each event once, and lets go of everything when they leave', async () => {
    const { engine, calls } = counting();
    const hub = new LiveFeedHub(engine, { pollMs: 20 });
    const start = await head('acme');
    const subs = Array.from({ length: 50 }, () => drain(hub.subscribe('acme', start, never)!));
    expect(hub.stats).toMatchObject({ tenants: 1, subscribers: 50, timers: 1, reads: 0 });
    await Promise.all(subs.map((s) => s.until(() => s.seen.deliveries >= 3)));
    // Every subscriber was handed three polls: three reads of the chain (a fourth may have started), not 150.
    expect(calls.auditSince).toBe(hub.stats.reads);
    expect(calls.auditSince).toBeGreaterThanOrEqual(3);
    expect(calls.auditSince).toBeLessThanOrEqual(4);

    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    await Promise.all(subs.map((s) => s.until(() => s.seen.items.length === 1)));
    expect(subs.every((s) => s.ids()[0] === proposed.id)).toBe(true);
    // One proposal read for the event, and one frame object handed to all fifty.
    expect(calls.get).toBe(1);
    expect(new Set(subs.map((s) => s.seen.items[0])).size).toBe(1);

    for (const s of subs) s.release();
    await Promise.all(subs.map((s) => s.done));
    expect(subs.every((s) => s.seen.end?.kind === 'released')).toBe(true);
    expect(hub.stats).toMatchObject({ subscribers: 0, timers: 0 });
    // A read in flight when the last one left retires the tenant's feed when it returns.
    await expect.poll(() => hub.stats.tenants).toBe(0);
    const reads = calls.auditSince;
    await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    expect(hub.stats).toEqual({ tenants: 0, subscribers: 0, timers: 0, reads, dropped: 0 });
  });

  it('drops a subscriber that stops taking events at its buffer (events or bytes), and the others still get every event', async () => {
    const hub = new LiveFeedHub(h.engine, { pollMs: 20, maxQueuedEvents: 3 });
    const byBytes = new LiveFeedHub(h.engine, { pollMs: 20, maxQueuedBytes: 100 });
    const start = await head('acme');
    const ended = (target: LiveFeedHub) =>
      new Promise<FeedEnd>((resolve) => {
        // Subscribed and never asked for its events: a stream stuck in a write to a client that stopped reading.
        target.subscribe('acme', start, resolve);
      });
    let stuckEnd: FeedEnd | undefined;
    let stuckByBytesEnd: FeedEnd | undefined;
    const stuck = ended(hub).then((end) => (stuckEnd = end));
    const stuckByBytes = ended(byBytes).then((end) => (stuckByBytesEnd = end));
    const reader = drain(hub.subscribe('acme', start, never)!);
    const proposed = [];
    // One batch, however large, never drops a subscriber: it is dropped when a later batch finds
    // the earlier one still waiting. Propose until both stuck subscribers are gone.
    for (let i = 0; i < 60 && !(stuckEnd && stuckByBytesEnd); i++)
      proposed.push(await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme'))));
    const [end, endByBytes] = await Promise.all([stuck, stuckByBytes]);
    expect(end.kind === 'overflow' && end.queued).toBeGreaterThan(3);
    expect(endByBytes.kind === 'overflow' && endByBytes.bytes).toBeGreaterThan(100);
    await reader.until(() => reader.seen.items.length === proposed.length);
    expect(reader.ids()).toEqual(proposed.map((p) => p.id));
    expect(hub.stats).toMatchObject({ subscribers: 1, dropped: 1 });
    expect(byBytes.stats).toMatchObject({ subscribers: 0, timers: 0, dropped: 1 });
    reader.release();
    expect(hub.stats).toMatchObject({ subscribers: 0, timers: 0 });
    hub.close();
    byBytes.close();
  });

  it("never hands a subscriber another tenant's events, though one hub reads both chains", async () => {
    const hub = new LiveFeedHub(h.engine, { pollMs: 20 });
    const acme = drain(hub.subscribe('acme', await head('acme'), never)!);
    const globex = drain(hub.subscribe('globex', await head('globex'), never)!);
    expect(hub.stats).toMatchObject({ tenants: 2, subscribers: 2, timers: 2 });
    const a1 = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const g1 = await proposeViaApi(h, 'globex', pay(freshInvoice(h.world, 'globex')));
    const a2 = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    await acme.until(() => acme.seen.items.length === 2);
    await globex.until(() => globex.seen.items.length === 1);
    // Two more polls of each: nothing else arrives.
    const [da, dg] = [acme.seen.deliveries, globex.seen.deliveries];
    await acme.until(() => acme.seen.deliveries >= da + 2);
    await globex.until(() => globex.seen.deliveries >= dg + 2);
    expect(acme.ids()).toEqual([a1.id, a2.id]);
    expect(globex.ids()).toEqual([g1.id]);
    hub.close();
    await Promise.all([acme.done, globex.done]);
    expect([acme.seen.end?.kind, globex.seen.end?.kind]).toEqual(['closed', 'closed']);
    expect(hub.stats).toMatchObject({ tenants: 0, subscribers: 0, timers: 0 });
  });

  it('drops an SSE stream whose client stops reading, with a log line and its slot freed, while another keeps streaming', async () => {
    const lines: { level: string; fields: object; message: string }[] = [];
    const streams = new EventStreams({ pollMs: 20, heartbeatMs: 60_000, maxQueuedEvents: 3 });
    // In process: the response body is a stream nobody reads, so the handler's write waits at once,
    // as it does when a client's socket buffer stays full.
    const app = createCountersignApp({
      engine: h.engine,
      directory: h.directory,
      logger: memoryLogger(lines),
      events: streams,
    });
    const stuck = await app.request('/api/v1/events', {
      headers: bearer(h.tenants.acme.operators.viewer.token),
    });
    const reading = await app.request('/api/v1/events', {
      headers: bearer(h.tenants.acme.operators.admin.token),
    });
    expect([stuck.status, reading.status]).toEqual([200, 200]);
    await expect.poll(() => streams.feeds.subscribers).toBe(2);
    const reader = reading.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const received = (async () => {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        text += chunk.value;
      }
    })();
    const proposed = [];
    for (let i = 0; i < 60 && streams.feeds.dropped === 0; i++)
      proposed.push(await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme'))));
    expect(streams.feeds.dropped).toBe(1);
    const last = proposed[proposed.length - 1]!.id;
    await expect.poll(() => text.includes(last)).toBe(true);
    expect([...text.matchAll(/"proposalId":"([^"]+)"/g)].map((m) => m[1])).toEqual(proposed.map((p) => p.id));
    await expect.poll(() => streams.open).toBe(1);
    const dropped = lines.filter(
      (l) => l.message === 'live event stream dropped: the client stopped reading',
    );
    expect(dropped).toHaveLength(1);
    expect(dropped[0]!.fields).toMatchObject({ tenant: 'acme', actor: 'user:viewer@acme.test' });
    expect(streams.feeds).toMatchObject({ subscribers: 1, dropped: 1 });
    await reader.cancel();
    await received;
    await expect.poll(() => streams.open).toBe(0);
    await expect.poll(() => streams.feeds.tenants).toBe(0);
    expect(streams.feeds).toMatchObject({ subscribers: 0, timers: 0 });
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
      `<div id="live-inbox" class="live-inbox" aria-live="polite" aria-atomic="true" data-testid="live-inbox" data-view="pending" data-you="user:${op.email}"></div>`,
    );
    // A refused stream is said in an alert region, empty until then.
    expect(inbox.html).toContain(
      '<div id="live-inbox-alert" class="live-inbox" role="alert" data-testid="live-inbox-alert"></div>',
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
