import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import { emailSender } from '../../src/notify/email-sender.js';
import { emailRecipients, tenantApprovers } from '../../src/notify/notifications.js';
import { notificationOutbox } from '../../src/notify/outbox-writer.js';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { TEST_PASSWORD_COST } from '../server/support/server-harness.js';
import { outboxOf } from '../../src/store/sql-outbox.js';
import type { Actor } from '../../src/index.js';
import type { NotificationPayload } from '../../src/notify/outbox-writer.js';
import { type Harness, harness, proposePayment } from '../support/engine.js';

interface Mail {
  readonly from: string;
  readonly to: readonly string[];
  readonly raw: string;
}

/** A real SMTP server on loopback (no TLS, no auth) that keeps every message. */
async function startSmtp(): Promise<{ url: string; mails: Mail[]; close: () => Promise<void> }> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The decoded text of a quoted-printable (UTF-8) or 7bit message, its folded headers unfolded. */
function textOf(raw: string): string {
  const unfolded = raw.replace(/\r?\n[ \t]+/g, ' ').replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < unfolded.length; i++) {
    const hex = /^=([0-9A-F]{2})/.exec(unfolded.slice(i, i + 3));
    if (hex) {
      bytes.push(Number.parseInt(hex[1]!, 16));
      i += 2;
    } else bytes.push(...Buffer.from(unfolded[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

let h: Harness | undefined;
let smtp: Awaited<ReturnType<typeof startSmtp>> | undefined;
afterEach(async () => {
  await h?.close();
  await smtp?.close();
  h = undefined;
  smtp = undefined;
});

async function setup(smtpUrl?: string) {
  const operations = demoOperations(demoWorld());
  h = await harness({
    stepWriters: [notificationOutbox({ channels: ['email', 'webhook'], operations })],
  });
  const { clock, engine } = h;
  const store = h.store;
  const directory = new PrincipalDirectory(store, { passwordCost: TEST_PASSWORD_COST });
  await directory.migrate();
  await directory.ensureTenant('acme');
  await directory.ensureTenant('globex');
  const password = 'correct horse battery staple 42';
  await directory.addOperator({ tenant: 'acme', email: 'ada@acme.test', password, roles: ['approver'] });
  await directory.addOperator({ tenant: 'acme', email: 'root@acme.test', password, roles: ['admin'] });
  await directory.addOperator({ tenant: 'acme', email: 'vic@acme.test', password, roles: ['viewer'] });
  await directory.addOperator({ tenant: 'acme', email: 'fay@acme.test', password, roles: ['approver'] });
  await directory.addOperator({ tenant: 'acme', email: 'cfo@acme.test', password, roles: ['approver'] });
  await directory.addOperator({ tenant: 'globex', email: 'gus@globex.test', password, roles: ['approver'] });
  const dispatcher = createDispatcher({
    store,
    senders: {
      webhook: async () => ({ kind: 'delivered' }),
      email: emailSender(
        { smtpUrl: smtpUrl ?? smtp!.url, from: 'Approvals <approvals@countersign.test>', timeoutMs: 2_000 },
        {
          publicUrl: 'https://approvals.example.test',
          // Who may still decide, as the engine says (what `countersign serve` wires).
          recipients: emailRecipients(
            tenantApprovers(directory, ['approver', 'admin']),
            async (actor, id) => {
              const proposal = await engine.proposals.get(actor.tenant, id);
              return proposal !== undefined && engine.proposals.mayDecide(actor, proposal).kind === 'allowed';
            },
          ),
          stillPending: async (tenant, id) =>
            (await store.read((r) => r.getProposal(tenant, id)))?.status === 'pending',
          now: () => clock.now(),
        },
      ),
    },
    clock,
    retry: { delaysMs: [60_000], thenEveryMs: 60_000, budgetMs: 3_600_000, jitter: 0 },
  });
  const deliveries = () =>
    store.transaction((tx) => outboxOf(tx, store.capabilities).list('acme', { limit: 10 }));
  return { engine, clock, dispatcher, deliveries, store };
}

/** The one message sent to `address` (each recipient has their own). */
function mailTo(mails: readonly Mail[], address: string): string {
  const sent = mails.filter((m) => m.to.includes(address));
  expect(sent, address).toHaveLength(1);
  expect(sent[0]!.to).toEqual([address]);
  return textOf(sent[0]!.raw);
}

const admin: Actor = { id: 'user:root@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] };

describe('routed notifications over a real SMTP server', () => {
  it('mails a routed proposal to its group only, its escalation to the escalation group, its reminder once; the payload names the route and channel', async () => {
    smtp = await startSmtp();
    const { engine, clock, dispatcher, deliveries } = await setup();
    await engine.groups.save({
      tenant: 'acme',
      name: 'finance',
      members: ['user:fay@acme.test'],
      actor: admin,
    });
    await engine.groups.save({ tenant: 'acme', name: 'cfo', members: ['user:cfo@acme.test'], actor: admin });
    const saved = await engine.routes.save({
      tenant: 'acme',
      route: {
        name: 'payments over 1,000.00',
        operation: 'invoice.pay',
        amount: { field: 'amount_minor', above: 100_000 },
        group: 'finance',
        channel: '#finance',
        escalation: { afterMs: 10 * 60_000, group: 'cfo', channel: '#cfo' },
      },
      actor: admin,
    });
    expect(saved.kind).toBe('saved');
    const proposal = await proposePayment(engine, 'acme', 'inv-105');
    await dispatcher.runOnce();
    // Only the finance group: not ada, not root (an admin outside the group), not the cfo yet.
    expect(smtp.mails.map((m) => m.to)).toEqual([['fay@acme.test']]);
    const created = (await deliveries()).find(
      (d) => d.type === 'proposal.created' && d.channel === 'webhook',
    )!;
    const payload = JSON.parse(created.payloadJson) as NotificationPayload;
    expect(payload.data.route).toEqual({
      id: saved.kind === 'saved' ? saved.route.id : '',
      name: 'payments over 1,000.00',
      group: 'finance',
      channel: '#finance',
      escalated: false,
    });
    smtp.mails.length = 0;

    clock.advance(10 * 60_000);
    expect(await engine.sweeps.escalateDue()).toBe(1);
    await dispatcher.runOnce();
    // Escalated: the cfo group now decides it too and is told; the finance group may still decide it.
    expect(smtp.mails.map((m) => m.to).sort()).toEqual([['cfo@acme.test'], ['fay@acme.test']]);
    const text = mailTo(smtp.mails, 'cfo@acme.test');
    expect(text).toContain(
      `Subject: Escalated to you: Pay Contoso Freight 12,500.00 USD [${proposal.short}]`,
    );
    expect(text).toContain('on the route payments over 1,000.00; it is escalated to the group cfo');
    const escalated = (await deliveries()).find(
      (d) => d.type === 'proposal.escalated' && d.channel === 'webhook',
    )!;
    expect((JSON.parse(escalated.payloadJson) as NotificationPayload).data.route).toMatchObject({
      group: 'cfo',
      channel: '#cfo',
      escalated: true,
    });
    smtp.mails.length = 0;

    clock.advance(10 * 60_000);
    expect(await engine.sweeps.remindDue({ beforeExpiryMs: 10 * 60_000 })).toBe(1);
    expect(await engine.sweeps.remindDue({ beforeExpiryMs: 10 * 60_000 })).toBe(0);
    await dispatcher.runOnce();
    expect(smtp.mails.map((m) => m.to).sort()).toEqual([['cfo@acme.test'], ['fay@acme.test']]);
    expect(mailTo(smtp.mails, 'fay@acme.test')).toContain('Subject: Reminder, expires soon:');
    expect((await deliveries()).filter((d) => d.type === 'proposal.reminded')).toHaveLength(2);
  });

  it('an unrouted proposal is mailed to every approver as before', async () => {
    smtp = await startSmtp();
    const { engine, dispatcher } = await setup();
    await engine.groups.save({
      tenant: 'acme',
      name: 'finance',
      members: ['user:fay@acme.test'],
      actor: admin,
    });
    await engine.routes.save({
      tenant: 'acme',
      route: {
        name: 'big',
        operation: 'invoice.pay',
        amount: { field: 'amount_minor', above: 100_000 },
        group: 'finance',
      },
      actor: admin,
    });
    await proposePayment(engine, 'acme', 'inv-104');
    await dispatcher.runOnce();
    expect(smtp.mails.map((m) => m.to).sort()).toEqual([
      ['ada@acme.test'],
      ['cfo@acme.test'],
      ['fay@acme.test'],
      ['root@acme.test'],
    ]);
  });
});
