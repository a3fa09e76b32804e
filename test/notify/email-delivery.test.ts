import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../examples/index.js';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import { emailSender } from '../../src/notify/email-sender.js';
import { approverEmails } from '../../src/notify/notifications.js';
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

/** The decoded text of a quoted-printable or 7bit message (enough for these ASCII messages). */
function textOf(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
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
    clock: { now: () => Date.now() },
    stepWriters: [notificationOutbox({ channels: ['email'], operations })],
  });
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
          recipients: approverEmails(directory, ['approver', 'admin']),
          stillPending: async (tenant, id) =>
            (await store.read((r) => r.getProposal(tenant, id)))?.status === 'pending',
        },
      ),
    },
    retry: { delaysMs: [60_000], thenEveryMs: 60_000, budgetMs: 3_600_000, jitter: 0 },
  });
  const deliveries = () =>
    store.transaction((tx) => outboxOf(tx, store.capabilities).list('acme', { limit: 10 }));
  return { engine: h.engine, dispatcher, deliveries };
}

describe('approval emails over a real SMTP server', () => {
  it("mails a new proposal to the tenant's approvers: title, amount, short hash, expiry, deep link", async () => {
    smtp = await startSmtp();
    const { engine, dispatcher, deliveries } = await setup();
    const proposal = await proposePayment(engine);
    expect(await dispatcher.runOnce()).toBe(1);
    expect((await deliveries()).map((d) => [d.channel, d.status, d.attempts])).toEqual([
      ['email', 'delivered', 1],
    ]);
    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.from).toBe('approvals@countersign.test');
    // Approvers and admins of acme; never the viewer, never another tenant's operators.
    expect([...mail.to].sort()).toEqual(['ada@acme.test', 'root@acme.test']);
    const text = textOf(mail.raw);
    expect(text).toContain(
      `Subject: Approval needed: Pay Northwind Paper Co. 240.49 USD [${proposal.short}]`,
    );
    expect(text).toContain('Amount:     240.49 USD');
    expect(text).toContain(`Short hash: ${proposal.short}`);
    expect(text).toContain(`Expires:    ${proposal.expiresAt.toISOString()}`);
    expect(text).toContain(`https://approvals.example.test/proposals/${proposal.id}`);
    expect(text).not.toContain('acct-supplier-7');
  });

  it('sends nothing for a proposal decided before its email went out (skipped)', async () => {
    smtp = await startSmtp();
    const { engine, dispatcher, deliveries } = await setup();
    const proposal = await proposePayment(engine);
    await engine.decline({ tenant: 'acme', proposalId: proposal.id, actor: approver(), reason: 'no' });
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
