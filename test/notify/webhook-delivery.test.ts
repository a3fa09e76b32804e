import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import { notificationOutbox } from '../../src/notify/outbox-writer.js';
import type { RetrySchedule } from '../../src/notify/retry-schedule.js';
import { webhookSender } from '../../src/notify/webhook-sender.js';
import { type OutboxRecord, outboxOf } from '../../src/store/sql-outbox.js';
import { type Harness, harness, proposePayment } from '../support/engine.js';
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

async function setup(options: { retry?: RetrySchedule; timeoutMs?: number } = {}) {
  receiver = await startReceiver();
  const { demoOperations, demoWorld } = await import('../../examples/index.js');
  const operations = demoOperations(demoWorld());
  // The real clock: the retry budget counts from the event's time.
  h = await harness({
    clock: { now: () => Date.now() },
    stepWriters: [notificationOutbox({ channels: ['webhook'], operations })],
  });
  const store = h.store;
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
  const deliveries = () =>
    store.transaction((tx) => outboxOf(tx, store.capabilities).list('acme', { limit: 100 })) as Promise<
      OutboxRecord[]
    >;
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
  return { engine: h.engine, receiver, deliveries, drain };
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
    expect(row?.lastError).toBe('timed out after 200 ms');
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
    expect(rows[0]?.lastError).toBe('HTTP 503');
    expect(rows[0]!.attempts).toBeGreaterThanOrEqual(3);
    expect(receiver.received).toHaveLength(rows[0]!.attempts);
    const seen = receiver.received.length;
    await new Promise((r) => setTimeout(r, 150));
    await drain(200);
    expect(receiver.received).toHaveLength(seen);
  });

  it('a refused connection is a failure with its cause, retried like any other', async () => {
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
    expect(row?.lastError).toMatch(/ECONNREFUSED/);
  });
});
