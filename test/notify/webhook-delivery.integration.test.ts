import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { SendResult } from '../../src/notify/channel.js';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import { notificationOutbox } from '../../src/notify/outbox-writer.js';
import type { RetrySchedule } from '../../src/notify/retry-schedule.js';
import { webhookSender } from '../../src/notify/webhook-sender.js';
import { type OutboxRecord, outboxOf } from '../../src/store/sql-outbox.js';
import { approver, type Harness, harness, proposePayment } from '../support/engine.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const PUBLIC_URL = 'https://approvals.example.test';
const FAST: RetrySchedule = { delaysMs: [50, 100], thenEveryMs: 100, budgetMs: 60_000, jitter: 0 };

let h: Harness | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await h?.close();
  await receiver?.close();
  h = undefined;
  receiver = undefined;
});

/** A harness whose steps write webhook deliveries, on the real clock (the retry budget counts from the event's time). */
async function outboxHarness(): Promise<Harness> {
  const { demoOperations, demoWorld } = await import('../../src/demo/demo-world.js');
  const operations = demoOperations(demoWorld());
  h = await harness({
    clock: { now: () => Date.now() },
    stepWriters: [notificationOutbox({ channels: ['webhook'], operations })],
  });
  return h;
}

const deliveriesOf = (store: Harness['store']) => () =>
  store.transaction((tx) => outboxOf(tx, store.capabilities).list('acme', { limit: 100 })) as Promise<
    OutboxRecord[]
  >;

async function setup(options: { retry?: RetrySchedule; timeoutMs?: number } = {}) {
  receiver = await startReceiver();
  const { store } = await outboxHarness();
  const dispatcher = createDispatcher({
    store,
    senders: {
      webhook: webhookSender(
        { url: receiver.url, secret: SECRET, timeoutMs: options.timeoutMs ?? 2_000 },
        { publicUrl: PUBLIC_URL },
      ),
    },
    retry: options.retry ?? FAST,
    leaseMs: 10_000,
  });
  const deliveries = deliveriesOf(store);
  /** Runs the dispatcher until nothing is pending (or the deadline). */
  const drain = async (deadlineMs = 15_000) => {
    const end = Date.now() + deadlineMs;
    for (;;) {
      await dispatcher.runOnce();
      const rows = await deliveries();
      if (rows.every((r) => r.status !== 'pending') || Date.now() > end) return rows;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { engine: h!.engine, receiver, deliveries, drain };
}

describe('webhook delivery to a real receiver', () => {
  it('signs per Standard Webhooks: the reference library verifies it; the payload carries the approval URL', async () => {
    const { engine, receiver, drain } = await setup();
    const proposal = await proposePayment(engine);
    const rows = await drain();
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([['delivered', 1]]);
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    const verified = new Webhook(SECRET).verify(got.body, got.headers) as {
      type: string;
      data: Record<string, unknown>;
    };
    expect(got.headers['webhook-id']).toBe(rows[0]!.eventId);
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(verified.type).toBe('proposal.created');
    expect(verified.data['approvalUrl']).toBe(`${PUBLIC_URL}/proposals/${proposal.id}`);
    expect(verified.data['proposalId']).toBe(proposal.id);
    expect(verified.data['short']).toBe(proposal.short);
    expect(got.body).not.toContain('acct-supplier-7');
    // A body changed in transit, or signed with another secret, does not verify.
    expect(() => new Webhook(SECRET).verify(got.body.replace('240.49', '940.49'), got.headers)).toThrow();
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => new Webhook(other).verify(got.body, got.headers)).toThrow();
  });

  it('delivers a first approval of two as proposal.approval_given: 1 of 2, by whom, the rule, signed', async () => {
    const { engine, receiver, drain } = await setup();
    // inv-105 is 12,500.00 USD: two approvers.
    const proposal = await proposePayment(engine, 'acme', 'inv-105');
    const ada = approver('acme', 'ada');
    const first = await engine.proposals.approve({
      tenant: 'acme',
      proposalId: proposal.id,
      approver: ada,
      seenDigest: proposal.digest,
    });
    expect(first.kind).toBe('awaiting_approvals');
    const rows = await drain();
    expect(rows.map((r) => [r.type, r.status]).sort()).toEqual([
      ['proposal.approval_given', 'delivered'],
      ['proposal.created', 'delivered'],
    ]);
    const bodies = receiver.received.map(
      (got) =>
        new Webhook(SECRET).verify(got.body, got.headers) as { type: string; data: Record<string, unknown> },
    );
    const created = bodies.find((b) => b.type === 'proposal.created')!;
    expect(created.data['approvals']).toEqual({ required: 2, roles: [], given: 0, approvers: [] });
    const given = bodies.find((b) => b.type === 'proposal.approval_given')!;
    expect(given.data).toMatchObject({
      proposalId: proposal.id,
      status: 'pending',
      actor: ada.id,
      approvals: { required: 2, roles: [], given: 1, approvers: [ada.id] },
      amount: { minor: 1_250_000, currency: 'USD', display: '12,500.00 USD' },
      approvalUrl: `${PUBLIC_URL}/proposals/${proposal.id}`,
    });
    expect(receiver.received.map((r) => r.body).join('')).not.toContain('acct-supplier-9');
  });

  it('retries a receiver that answers 500, with the same webhook-id, and records the attempts', async () => {
    const { engine, receiver, drain } = await setup();
    receiver.script([500], 200);
    await proposePayment(engine);
    const rows = await drain();
    expect(rows.map((r) => [r.status, r.attempts, r.lastError])).toEqual([['delivered', 2, null]]);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([
      rows[0]!.eventId,
      rows[0]!.eventId,
    ]);
    // Each attempt is signed afresh and verifies.
    for (const r of receiver.received)
      expect(() => new Webhook(SECRET).verify(r.body, r.headers)).not.toThrow();
    // The retry waited for the first delay of the schedule.
    expect(receiver.received[1]!.at - receiver.received[0]!.at).toBeGreaterThanOrEqual(45);
  });

  it('retries a receiver that times out', async () => {
    const { engine, receiver, drain, deliveries } = await setup({ timeoutMs: 300 });
    receiver.script(['hold'], 204);
    await proposePayment(engine);
    const started = Date.now();
    await drain();
    const rows = await deliveries();
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([['delivered', 2]]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([
      rows[0]!.eventId,
      rows[0]!.eventId,
    ]);
  });

  it('records the timeout as the last error while the retry waits', async () => {
    const { engine, receiver, deliveries } = await setup({
      timeoutMs: 200,
      retry: { delaysMs: [60_000], thenEveryMs: 60_000, budgetMs: 3_600_000, jitter: 0 },
    });
    receiver.script(['hold']);
    await proposePayment(engine);
    const dispatcher = createDispatcher({
      store: h!.store,
      senders: {
        webhook: webhookSender(
          { url: receiver.url, secret: SECRET, timeoutMs: 200 },
          { publicUrl: PUBLIC_URL },
        ),
      },
      retry: { delaysMs: [60_000], thenEveryMs: 60_000, budgetMs: 3_600_000, jitter: 0 },
    });
    await dispatcher.runOnce();
    const [row] = await deliveries();
    expect(row?.status).toBe('pending');
    expect(row?.attempts).toBe(1);
    expect(row?.lastError).toBe('timeout');
    expect(row!.nextAt - Date.now()).toBeGreaterThan(55_000);
    // Not due yet: nothing is sent again now.
    expect(await dispatcher.runOnce()).toBe(0);
  });

  it('dead-letters after the retry budget and stops sending', async () => {
    const { engine, receiver, drain } = await setup({
      retry: { delaysMs: [30, 30, 30], thenEveryMs: 30, budgetMs: 200, jitter: 0 },
    });
    receiver.script([], 503);
    await proposePayment(engine);
    const rows = await drain();
    expect(rows[0]?.status).toBe('dead');
    expect(rows[0]?.lastError).toBe('http_status 503');
    expect(rows[0]!.attempts).toBeGreaterThanOrEqual(3);
    expect(receiver.received).toHaveLength(rows[0]!.attempts);
    const seen = receiver.received.length;
    await new Promise((r) => setTimeout(r, 150));
    await drain(200);
    expect(receiver.received).toHaveLength(seen);
  });

  it('a refused connection is a failure named by its code, retried like any other', async () => {
    const { engine, receiver, deliveries } = await setup();
    const url = receiver.url;
    await receiver.close();
    await proposePayment(engine);
    const dispatcher = createDispatcher({
      store: h!.store,
      senders: { webhook: webhookSender({ url, secret: SECRET }, { publicUrl: PUBLIC_URL }) },
      retry: FAST,
    });
    await dispatcher.runOnce();
    const [row] = await deliveries();
    expect(row?.status).toBe('pending');
    expect(row?.lastError).toBe('connection_refused');
  });
});

describe('an endpoint that answers again after an outage', () => {
  const SLOW: RetrySchedule = { delaysMs: [60_000], thenEveryMs: 60_000, budgetMs: 3_600_000, jitter: 0 };

  it('gets the waiting retries at once, not on their schedule a minute later', async () => {
    const { engine, receiver, deliveries } = await setup({ retry: SLOW });
    const dispatcher = createDispatcher({
      store: h!.store,
      senders: { webhook: webhookSender({ url: receiver.url, secret: SECRET }, { publicUrl: PUBLIC_URL }) },
      retry: SLOW,
    });
    receiver.script([500, 500], 204);
    await proposePayment(engine, 'acme', 'inv-104');
    await proposePayment(engine, 'acme', 'inv-105');
    expect(await dispatcher.runOnce()).toBe(2);
    const waiting = await deliveries();
    expect(waiting.map((r) => [r.status, r.attempts, r.lastError])).toEqual([
      ['pending', 1, 'http_status 500'],
      ['pending', 1, 'http_status 500'],
    ]);
    expect(Math.min(...waiting.map((r) => r.nextAt)) - Date.now()).toBeGreaterThan(55_000);
    // Nothing is due, so nothing is sent, until a new event goes through: the endpoint is back.
    expect(await dispatcher.runOnce()).toBe(0);
    await proposePayment(engine, 'acme', 'inv-106');
    expect(await dispatcher.runOnce()).toBe(1);
    expect(await dispatcher.runOnce()).toBe(2);
    const rows = await deliveries();
    expect(rows.map((r) => [r.status, r.lastError]).sort()).toEqual([
      ['delivered', null],
      ['delivered', null],
      ['delivered', null],
    ]);
    expect(rows.map((r) => r.attempts).sort()).toEqual([1, 2, 2]);
    expect(receiver.received.filter((r) => r.reply === 204)).toHaveLength(3);
  });

  it('leaves deliveries another dispatcher holds, and other channels, on their own schedule', async () => {
    const { engine, deliveries } = await setup({ retry: SLOW });
    await proposePayment(engine, 'acme', 'inv-104');
    await proposePayment(engine, 'acme', 'inv-105');
    const store = h!.store;
    const [held, waiting] = await deliveries();
    const now = Date.now();
    await store.transaction(async (tx) => {
      const outbox = outboxOf(tx, store.capabilities);
      const failed = {
        status: 'pending',
        nextAt: now + 60_000,
        lastError: 'http_status 500',
        at: now,
      } as const;
      const leased = await outbox.claim({ now, leaseUntil: now + 30_000, owner: 'other', limit: 10 });
      expect(leased).toHaveLength(2);
      expect(await outbox.finish('acme', waiting!.id, 'other', failed)).toBe(true);
      expect(await outbox.resume('email', now)).toBe(0);
      // held stays leased to the other dispatcher: its attempt is under way.
      expect(await outbox.resume('webhook', now)).toBe(1);
    });
    const after = await deliveries();
    expect(after.find((r) => r.id === waiting!.id)?.nextAt).toBe(now);
    expect(after.find((r) => r.id === held!.id)?.leaseOwner).toBe('other');
  });
});

describe("a failed delivery's last error is a code, never the message or the receiver's reply", () => {
  const TOKEN = 'sk_live_51HxQ7tokenInTheQuery';
  const LONG_RETRY: RetrySchedule = {
    delaysMs: [60_000],
    thenEveryMs: 60_000,
    budgetMs: 3_600_000,
    jitter: 0,
  };

  /** One proposal, one dispatcher pass with these senders; the delivery row after it. */
  async function attemptOnce(senders: Parameters<typeof createDispatcher>[0]['senders']) {
    await h?.close();
    const { engine, store } = await outboxHarness();
    await proposePayment(engine);
    const dispatcher = createDispatcher({ store, senders, retry: LONG_RETRY });
    expect(await dispatcher.runOnce()).toBe(1);
    const rows = await deliveriesOf(store)();
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([['pending', 1]]);
    return rows[0]!;
  }
  const toUrl = (url: string, timeoutMs = 2_000) => ({
    webhook: webhookSender({ url, secret: SECRET, timeoutMs }, { publicUrl: PUBLIC_URL }),
  });

  it('an HTTP 500 from a real receiver: http_status 500', async () => {
    receiver = await startReceiver();
    receiver.script([], 500);
    const row = await attemptOnce(toUrl(receiver.url));
    expect(row.lastError).toBe('http_status 500');
  });

  it("a receiver's response body, secret-looking text included, never reaches the last error", async () => {
    receiver = await startReceiver();
    const reply = `upstream db-primary.internal.corp:5432 refused; token=${TOKEN}; see https://hooks.internal/debug?key=${TOKEN}`;
    receiver.script([], { status: 502, body: reply });
    const row = await attemptOnce(toUrl(`${receiver.url}?token=${TOKEN}`));
    expect(row.lastError).toBe('http_status 502');
  });

  it('a refused connection (a closed port, a token in the URL): connection_refused', async () => {
    receiver = await startReceiver();
    const url = `${receiver.url}?token=${TOKEN}`;
    await receiver.close();
    const row = await attemptOnce(toUrl(url));
    expect(row.lastError).toBe('connection_refused');
  });

  it('a receiver that never answers, with a small timeout: timeout', async () => {
    receiver = await startReceiver();
    receiver.script([], 'hold');
    const row = await attemptOnce(toUrl(`${receiver.url}?token=${TOKEN}`, 150));
    expect(row.lastError).toBe('timeout');
  });

  it('a host name that does not resolve: dns_failure', async () => {
    const row = await attemptOnce(toUrl(`http://hooks.countersign-test.invalid/in?token=${TOKEN}`));
    expect(row.lastError).toBe('dns_failure');
  });

  it('https to a receiver that speaks plain HTTP: tls_error', async () => {
    receiver = await startReceiver();
    const row = await attemptOnce(toUrl(`${receiver.url.replace('http:', 'https:')}?token=${TOKEN}`));
    expect(row.lastError).toBe('tls_error');
  });

  it('an answer that is not HTTP: invalid_response', async () => {
    receiver = await startReceiver();
    receiver.script([], 'garbage');
    const row = await attemptOnce(toUrl(receiver.url));
    expect(row.lastError).toBe('invalid_response');
  });

  it('a custom sender returning raw text, or throwing, stores sender_failed; a missing channel its code', async () => {
    // Plain JavaScript can return what the types forbid: its text is still not stored.
    const rawText = async () =>
      ({ kind: 'failed', error: `connect ECONNREFUSED 10.0.0.7:443 ${TOKEN}` }) as unknown as SendResult;
    expect((await attemptOnce({ webhook: rawText })).lastError).toBe('sender_failed');
    const throwing = async (): Promise<SendResult> => {
      throw new Error(`boom ${TOKEN}`);
    };
    expect((await attemptOnce({ webhook: throwing })).lastError).toBe('sender_failed');
    expect((await attemptOnce({})).lastError).toBe('channel_not_configured');
  });
});
