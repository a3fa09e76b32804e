import { afterEach, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/index.js';
import type { NotificationPayload } from '../../src/notify/outbox-writer.js';
import { proposePayment } from '../support/engine.js';
import { type EmailDispatch, emailDispatch } from './support/email-dispatch.js';
import { mailTo, type SmtpReceiver, startSmtpReceiver } from './support/smtp-receiver.js';

let h: EmailDispatch | undefined;
let smtp: SmtpReceiver | undefined;
afterEach(async () => {
  await h?.close();
  await smtp?.close();
  h = undefined;
  smtp = undefined;
});

async function setup() {
  h = await emailDispatch({
    smtpUrl: smtp!.url,
    webhook: true,
    moreApprovers: ['fay@acme.test', 'cfo@acme.test'],
  });
  return h;
}

const admin: Actor = { id: 'user:root@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] };

describe('routed notifications over a real SMTP server', () => {
  it('mails a routed proposal to its group only, its escalation to the escalation group, its reminder once; the payload names the route and channel', async () => {
    smtp = await startSmtpReceiver();
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
    smtp = await startSmtpReceiver();
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
