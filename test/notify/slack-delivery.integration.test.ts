import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import { slackCardState } from '../../src/notify/notifications.js';
import { notificationOutbox } from '../../src/notify/outbox-writer.js';
import type { RetrySchedule } from '../../src/notify/retry-schedule.js';
import { slackApi } from '../../src/notify/slack-api.js';
import { slackSender } from '../../src/notify/slack-sender.js';
import { type OutboxRecord, outboxOf } from '../../src/store/sql-outbox.js';
import { approver, type Harness, harness, proposePayment } from '../support/engine.js';
import { buttonValue, cardText, FAKE_CHANNEL, type FakeSlack, startFakeSlack } from './support/fake-slack.js';

const TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
const FAST: RetrySchedule = { delaysMs: [50, 100], thenEveryMs: 100, budgetMs: 60_000, jitter: 0 };

let h: Harness | undefined;
let slack: FakeSlack | undefined;
afterEach(async () => {
  await h?.close();
  await slack?.close();
  h = undefined;
  slack = undefined;
});

async function setup(options: { channel?: string; token?: string; channels?: readonly string[] } = {}) {
  slack = await startFakeSlack(TOKEN, options.channels ? { channels: options.channels } : {});
  const { demoOperations, demoWorld } = await import('../../src/demo/demo-world.js');
  const operations = demoOperations(demoWorld());
  // Real time (the dispatcher's retries wait on it), moved ahead by hand for escalations.
  let ahead = 0;
  const clock = { now: () => Date.now() + ahead };
  h = await harness({
    clock,
    stepWriters: [notificationOutbox({ channels: ['slack'], operations })],
  });
  const { engine, store } = h;
  const sender = slackSender(
    slackApi({ botToken: options.token ?? TOKEN, apiUrl: slack.apiUrl, timeoutMs: 2_000 }),
    {
      store,
      operations,
      publicUrl: 'https://desk.example.test',
      channel: options.channel ?? FAKE_CHANNEL,
      state: async (tenant, id) => {
        const p = await engine.proposals.get(tenant, id);
        return p ? slackCardState(p) : undefined;
      },
    },
  );
  const dispatcher = createDispatcher({
    store,
    senders: { slack: sender },
    retry: FAST,
    leaseMs: 10_000,
    clock,
  });
  const deliveries = () =>
    store.transaction((tx) => outboxOf(tx, store.capabilities).list('acme', { limit: 100 })) as Promise<
      OutboxRecord[]
    >;
  /** Runs the dispatcher until nothing is pending (or the deadline). */
  const drain = async (deadlineMs = 10_000) => {
    const end = Date.now() + deadlineMs;
    for (;;) {
      await dispatcher.runOnce();
      const rows = await deliveries();
      if (rows.every((r) => r.status !== 'pending') || Date.now() > end) return rows;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const advance = (ms: number) => {
    ahead += ms;
  };
  return { engine, advance, fake: slack, dispatcher, deliveries, drain };
}

describe('Slack delivery to a fake Web API on loopback', () => {
  it('posts a card once and updates that same message in place at each later event', async () => {
    const { engine, fake, drain } = await setup();
    const proposal = await proposePayment(engine);
    const rows = await drain();
    expect(rows.map((r) => [r.type, r.status, r.attempts])).toEqual([['proposal.created', 'delivered', 1]]);
    expect(fake.messages).toHaveLength(1);
    const message = fake.messages[0]!;
    expect(JSON.parse(buttonValue(message, 'countersign_approve')!)).toEqual({
      tenant: 'acme',
      proposalId: proposal.id,
      digest: proposal.digest,
    });
    expect(cardText(message)).toContain('https://desk.example.test/proposals/');
    // The redacted preview only: the full account number never reaches Slack.
    expect(cardText(message)).not.toContain('acct-supplier-7');
    await engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: proposal.id,
      approver: approver('acme', 'ada'),
      seenDigest: proposal.digest,
    });
    const after = await drain();
    expect(after.every((r) => r.status === 'delivered')).toBe(true);
    expect(fake.messages).toHaveLength(1);
    expect(fake.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(1);
    expect(cardText(message)).toContain('Outcome: succeeded.');
    expect(buttonValue(message, 'countersign_approve')).toBeUndefined();
  });

  it("stores Slack's own error as the delivery's last error and retries: channel_not_found, invalid_auth", async () => {
    const { engine, deliveries, dispatcher } = await setup({ channel: 'C0NOWHERE' });
    await proposePayment(engine);
    await dispatcher.runOnce();
    expect((await deliveries()).map((r) => [r.status, r.lastError])).toEqual([
      ['pending', 'slack_error channel_not_found'],
    ]);
    await h!.close();
    await slack!.close();
    h = undefined;
    const wrong = await setup({ token: 'xoxb-not-the-token' });
    await proposePayment(wrong.engine);
    await wrong.dispatcher.runOnce();
    expect((await wrong.deliveries()).map((r) => [r.status, r.lastError])).toEqual([
      ['pending', 'slack_error invalid_auth'],
    ]);
    expect(wrong.fake.messages).toHaveLength(0);
  });

  it('a 500 or a 429 on an update is retried until the card shows the decision', async () => {
    const { engine, fake, drain, dispatcher, deliveries } = await setup();
    const proposal = await proposePayment(engine);
    await drain();
    fake.fail('chat.update', { status: 500 });
    await engine.proposals.decline({
      tenant: 'acme',
      proposalId: proposal.id,
      actor: approver('acme', 'ada'),
    });
    await dispatcher.runOnce();
    expect((await deliveries()).find((r) => r.type === 'proposal.decided')?.lastError).toBe(
      'http_status 500',
    );
    fake.fail('chat.update', { status: 429 });
    await expect
      .poll(async () => {
        await dispatcher.runOnce();
        return (await deliveries()).find((r) => r.type === 'proposal.decided')?.lastError;
      })
      .toBe('http_status 429');
    fake.recover();
    const rows = await drain();
    expect(rows.every((r) => r.status === 'delivered')).toBe(true);
    expect(cardText(fake.messages[0]!)).toContain('Declined by ada@acme.test. Nothing was done.');
  });

  it('does not post a proposal decided before its post went out; its later events find no message', async () => {
    const { engine, fake, drain } = await setup();
    const proposal = await proposePayment(engine);
    await engine.proposals.decline({
      tenant: 'acme',
      proposalId: proposal.id,
      actor: approver('acme', 'ada'),
    });
    const rows = await drain();
    expect(rows.map((r) => [r.type, r.status, r.lastError]).sort()).toEqual([
      ['proposal.created', 'skipped', 'not_pending'],
      ['proposal.decided', 'skipped', 'no_message'],
    ]);
    expect(fake.messages).toHaveLength(0);
  });
  it('posts a routed proposal to its route channel, and an escalation to the escalation channel as well', async () => {
    const { engine, advance, fake, drain } = await setup({ channels: ['#finance-approvals', '#cfo'] });
    const admin = { id: 'user:root@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] } as const;
    for (const [name, members] of [
      ['finance', [approver('acme', 'fay').id]],
      ['cfo', [approver('acme', 'cfo').id]],
    ] as const)
      expect((await engine.groups.save({ tenant: 'acme', name, members, actor: admin })).kind).toBe('saved');
    const route = await engine.routes.save({
      tenant: 'acme',
      route: {
        name: 'payments over 1,000.00',
        operation: 'invoice.pay',
        amount: { field: 'amount_minor', above: 100_000 },
        group: 'finance',
        channel: '#finance-approvals',
        escalation: { afterMs: 600_000, group: 'cfo', channel: '#cfo' },
      },
      actor: admin,
    });
    expect(route.kind).toBe('saved');
    const small = await proposePayment(engine, 'acme', 'inv-104');
    const big = await proposePayment(engine, 'acme', 'inv-105');
    await drain();
    const posted = () =>
      fake.messages.map((m) => [m.channel, JSON.parse(buttonValue(m, 'countersign_approve')!).proposalId]);
    expect(posted()).toEqual([
      [FAKE_CHANNEL, small.id],
      ['#finance-approvals', big.id],
    ]);
    advance(600_000);
    expect(await engine.sweeps.escalateDue()).toBe(1);
    const rows = await drain();
    expect(rows.filter((r) => r.type === 'proposal.escalated').map((r) => r.status)).toEqual(['delivered']);
    expect(posted()).toEqual([
      [FAKE_CHANNEL, small.id],
      ['#finance-approvals', big.id],
      ['#cfo', big.id],
    ]);
  });
});
