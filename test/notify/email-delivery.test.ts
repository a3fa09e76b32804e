import { afterEach, describe, expect, it } from 'vitest';
import { approver, proposePayment } from '../support/engine.js';
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

async function setup(smtpUrl?: string) {
  h = await emailDispatch({ smtpUrl: smtpUrl ?? smtp!.url });
  return h;
}

describe('approval emails over a real SMTP server', () => {
  it("mails a new proposal to each of the tenant's approvers alone: rule, amount, destination, short hash, UTC and relative times, deep link", async () => {
    smtp = await startSmtpReceiver();
    const { engine, clock, dispatcher, deliveries } = await setup();
    const proposal = await proposePayment(engine);
    clock.advance(2 * 60_000);
    expect(await dispatcher.runOnce()).toBe(1);
    expect((await deliveries()).map((d) => [d.channel, d.status, d.attempts])).toEqual([
      ['email', 'delivered', 1],
    ]);
    // One message per approver or admin of acme, each addressed to them alone; never the viewer,
    // never another tenant's operators.
    expect(smtp.mails.map((m) => m.to).sort()).toEqual([['ada@acme.test'], ['root@acme.test']]);
    expect(smtp.mails.every((m) => m.from === 'approvals@countersign.test')).toBe(true);
    const text = mailTo(smtp.mails, 'ada@acme.test');
    expect(text).toMatch(/^To: ada@acme\.test\r?$/m);
    expect(text).toContain(
      `Subject: Approval needed: Pay Northwind Paper Co. 240.49 USD [${proposal.short}]`,
    );
    expect(text).toContain('Approval:    needs 1 approval — 0 given');
    expect(text).toContain('Amount:      240.49 USD');
    // The destination as the operation redacts it: never the full account.
    expect(text).toContain('Destination account id: …er-7');
    expect(text).not.toContain('acct-supplier-7');
    expect(text).toContain(`Short hash:  ${proposal.short}`);
    expect(text).toContain('Proposed:    2026-11-29 12:00:00 UTC (2 min ago)');
    expect(text).toContain('Expires:     2026-11-29 12:30:00 UTC (expires in 28 min)');
    expect(text).toContain(`https://approvals.example.test/proposals/${proposal.id}`);
  });

  it('a first approval of two mails the other approvers (not the one who approved): 1 of 2, by whom, needs 2 approvals', async () => {
    smtp = await startSmtpReceiver();
    const { engine, dispatcher, deliveries } = await setup();
    // inv-105 is 12,500.00 USD: two approvers.
    const proposal = await proposePayment(engine, 'acme', 'inv-105');
    await dispatcher.runOnce();
    expect(mailTo(smtp.mails, 'root@acme.test')).toContain('Approval:    needs 2 approvals — 0 given');
    smtp.mails.length = 0;
    const ada = approver('acme', 'ada');
    const first = await engine.proposals.approve({
      tenant: 'acme',
      proposalId: proposal.id,
      approver: ada,
      seenDigest: proposal.digest,
    });
    expect(first.kind).toBe('awaiting_approvals');
    expect(await dispatcher.runOnce()).toBe(1);
    expect((await deliveries()).map((d) => [d.type, d.status])).toContainEqual([
      'proposal.approval_given',
      'delivered',
    ]);
    // Ada approved: only root (an admin, who may give the second approval) is told.
    expect(smtp.mails.map((m) => m.to)).toEqual([['root@acme.test']]);
    const text = mailTo(smtp.mails, 'root@acme.test');
    expect(text).toContain(
      `Subject: Approval 1 of 2 given: Pay Contoso Freight 12,500.00 USD [${proposal.short}]`,
    );
    expect(text).toContain('user:ada@acme.test approved (1 of 2)');
    expect(text).toContain('Approval:    needs 2 approvals — 1 given (user:ada@acme.test)');
    expect(text).toContain('Amount:      12,500.00 USD');
    expect(text).toContain('Destination account id: …er-9');
    expect(text).toContain('(expires in 30 min)');
  });

  it('mails the outcome to the approver who decided it, and to nobody else', async () => {
    smtp = await startSmtpReceiver();
    const { engine, dispatcher, deliveries } = await setup();
    const proposal = await proposePayment(engine);
    await dispatcher.runOnce();
    smtp.mails.length = 0;
    const done = await engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: proposal.id,
      approver: approver('acme', 'ada'),
      seenDigest: proposal.digest,
    });
    expect(done.kind).toBe('completed');
    expect(await dispatcher.runOnce()).toBe(1);
    expect((await deliveries()).map((d) => [d.type, d.status])).toContainEqual([
      'proposal.outcome',
      'delivered',
    ]);
    expect(smtp.mails.map((m) => m.to)).toEqual([['ada@acme.test']]);
    const text = mailTo(smtp.mails, 'ada@acme.test');
    expect(text).toContain(
      `Subject: Outcome succeeded: Pay Northwind Paper Co. 240.49 USD [${proposal.short}]`,
    );
    expect(text).toContain('A proposal you approved has an outcome: succeeded.');
    expect(text).toContain('Approval:    needs 1 approval — 1 given (user:ada@acme.test)');
  });

  it('sends nothing for a proposal decided before its email went out (skipped)', async () => {
    smtp = await startSmtpReceiver();
    const { engine, dispatcher, deliveries } = await setup();
    const proposal = await proposePayment(engine);
    await engine.proposals.decline({
      tenant: 'acme',
      proposalId: proposal.id,
      actor: approver(),
      reason: 'no',
    });
    await dispatcher.runOnce();
    const [row] = await deliveries();
    expect([row?.status, row?.lastError]).toEqual(['skipped', 'not_pending']);
    expect(smtp.mails).toHaveLength(0);
  });

  it('a mail server that is down is a failure, retried later', async () => {
    smtp = await startSmtpReceiver();
    const url = smtp.url;
    await smtp.close();
    smtp = undefined;
    const { engine, dispatcher, deliveries } = await setup(url);
    await proposePayment(engine);
    await dispatcher.runOnce();
    const [row] = await deliveries();
    expect(row?.status).toBe('pending');
    expect(row?.attempts).toBe(1);
    expect(row?.lastError).toBe('connection_refused');
  });
});
