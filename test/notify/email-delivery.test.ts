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
import { approver, type Harness, harness, proposePayment } from '../support/engine.js';

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
    stepWriters: [notificationOutbox({ channels: ['email'], operations })],
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
  await directory.addOperator({ tenant: 'globex', email: 'gus@globex.test', password, roles: ['approver'] });
  const dispatcher = createDispatcher({
    store,
    senders: {
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
  return { engine, clock, dispatcher, deliveries };
}

/** The one message sent to `address` (each recipient has their own). */
function mailTo(mails: readonly Mail[], address: string): string {
  const sent = mails.filter((m) => m.to.includes(address));
  expect(sent, address).toHaveLength(1);
  expect(sent[0]!.to).toEqual([address]);
  return textOf(sent[0]!.raw);
}

describe('approval emails over a real SMTP server', () => {
  it("mails a new proposal to each of the tenant's approvers alone: rule, amount, destination, short hash, UTC and relative times, deep link", async () => {
    smtp = await startSmtp();
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
    smtp = await startSmtp();
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
    smtp = await startSmtp();
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
    smtp = await startSmtp();
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
    smtp = await startSmtp();
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
