// The project's own example operations, held to the testing kit exactly as a user would hold theirs:
// `for (const c of suite) it(c.name, c.run)`.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BroadcastBook,
  DRAFTS_TABLE,
  emailBroadcastApplyDraft,
  FakePaymentProvider,
  fileDelete,
  InvoiceBook,
  invoicePay,
  messageSend,
  OrderBook,
  orderRefundMissingDiscount,
  type PaymentRequest,
} from '../../src/demo/demo-world.js';
import { type AnyOperation, defineOperation } from '../../src/index.js';
import type { Prepared } from '../../src/operation/index.js';
import {
  adapterContract,
  kitFacts,
  mutationSuite,
  presentationSuite,
  recordingTransaction,
  recordingTransport,
} from '../../src/testing/index.js';

const TENANT = 'acme';
const NOT_ON_THE_CARD = {
  tenant: 'the console header and the API scope the proposal to the tenant',
  operation: 'the console names the operation kind above the card',
};

/** A payment provider that also records every call into `transport`, the adapter contract's fake transport. */
class RecordingProvider extends FakePaymentProvider {
  readonly transport = recordingTransport<{ request: PaymentRequest; idempotencyKey: string }>();
  override async pay(request: PaymentRequest, options: { idempotencyKey: string }) {
    this.transport.record({ request: { ...request }, idempotencyKey: options.idempotencyKey });
    return super.pay(request, options);
  }
}

/** Runs the operation's own `prepare` against the fakes, as the engine does when it freezes a proposal. */
async function prepared(
  operation: AnyOperation,
  request: unknown,
): Promise<Prepared<Record<string, unknown>, unknown>> {
  const result = await operation.prepare!(request, {
    ...kitFacts(operation, { tenant: TENANT }),
    reject: (modelMessage) => ({ kind: 'rejected', modelMessage }),
  });
  if ('kind' in result && result.kind === 'rejected') throw new Error(result.modelMessage);
  return result as Prepared<Record<string, unknown>, unknown>;
}

describe('invoice.pay', async () => {
  const provider = new RecordingProvider();
  const invoices = InvoiceBook.demo();
  const pay = invoicePay({ invoices, provider });
  // Boundary values: 240.49 (rounding shows) and 12,500.00 (grouping shows).
  const small = await prepared(pay, { invoice_id: 'inv-104' });
  const large = await prepared(pay, { invoice_id: 'inv-105' });
  expect(small.arguments['amount_minor']).toBe(24_049);

  describe('mutation suite', () => {
    for (const c of mutationSuite(pay, small.arguments as never, { facts: { tenant: TENANT } }))
      it(c.name, c.run);
  });
  describe('presentation suite', () => {
    for (const p of [small, large]) {
      for (const c of presentationSuite(pay, p.arguments as never, {
        preview: p.preview as never,
        notInPreview: NOT_ON_THE_CARD,
        facts: { tenant: TENANT },
      })) {
        it(`${p.arguments['invoice_id']}: ${c.name}`, c.run);
      }
    }
  });
  describe('adapter contract', () => {
    const cases = adapterContract(pay, provider.transport, [
      {
        name: 'pays the supplier account the exact amount, referencing the invoice, under the attempt key',
        arguments: small.arguments as never,
        facts: { tenant: TENANT },
        expected: (ids) => [
          {
            request: {
              destination_account_id: 'acct-supplier-7',
              amount_minor: 24_049,
              currency: 'USD',
              reference: 'inv-104',
            },
            idempotencyKey: ids.idempotencyKey,
          },
        ],
      },
    ]);
    for (const c of cases) it(c.name, c.run);
  });
});

describe('order.refund_missing_discount', async () => {
  const provider = new RecordingProvider();
  const orders = OrderBook.demo();
  const refund = orderRefundMissingDiscount({ orders, provider });
  const p = await prepared(refund, {
    order_id: 'ord-81',
    line_item_id: 'line-1',
    discount_id: 'disc-sibling',
  });

  describe('mutation suite', () => {
    for (const c of mutationSuite(refund, p.arguments as never, { facts: { tenant: TENANT } }))
      it(c.name, c.run);
  });
  describe('presentation suite', () => {
    const order = orders.find(TENANT, 'ord-81')!;
    const cases = presentationSuite(refund, p.arguments as never, {
      preview: p.preview as never,
      facts: { tenant: TENANT },
      notInPreview: {
        ...NOT_ON_THE_CARD,
        // Finding: the card names the customer, the product and the discount, never the order id itself.
        order_id: 'FINDING: the refund card does not show the order id (the customer name stands in for it)',
      },
      // Ids the card shows by their names.
      shownAs: {
        line_item_id: (id) => order.lines.find((l) => l.id === id)!.product,
        discount_id: (id) => order.discounts.find((d) => d.id === id)!.name,
        'refund_destination.kind': (kind) => String(kind).replace('_', ' '),
      },
    });
    for (const c of cases) it(c.name, c.run);
  });
  describe('adapter contract', () => {
    const cases = adapterContract(refund, provider.transport, [
      {
        name: 'refunds the discount to the original payment',
        arguments: p.arguments as never,
        facts: { tenant: TENANT },
        expected: (ids) => [
          {
            request: {
              destination_account_id: 'pay-ord-81',
              amount_minor: 2_700,
              currency: 'USD',
              reference: 'refund:ord-81:disc-sibling',
            },
            idempotencyKey: ids.idempotencyKey,
          },
        ],
      },
    ]);
    for (const c of cases) it(c.name, c.run);
  });
});

describe('email_broadcast.apply_draft', async () => {
  const broadcasts = BroadcastBook.demo();
  const apply = emailBroadcastApplyDraft({ broadcasts });
  const p = await prepared(apply, {
    broadcast_id: 'bc-spring',
    subject: 'Spring league opens 1 March',
    body: 'Registration is open.',
  });
  expect(p.arguments['audience']).toHaveLength(3);

  describe('mutation suite', () => {
    for (const c of mutationSuite(apply, p.arguments as never, { facts: { tenant: TENANT } }))
      it(c.name, c.run);
  });
  describe('presentation suite', () => {
    const cases = presentationSuite(apply, p.arguments as never, {
      preview: p.preview as never,
      facts: { tenant: TENANT },
      notInPreview: NOT_ON_THE_CARD,
      shownAs: { broadcast_id: (id) => broadcasts.find(TENANT, String(id))!.name },
    });
    for (const c of cases) it(c.name, c.run);
  });
  describe('adapter contract', () => {
    const transaction = recordingTransaction({
      ignore: /^(CREATE TABLE|SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT) /,
    });
    const cases = adapterContract(apply, transaction, [
      {
        name: 'writes the draft row (nothing is sent) with its command id',
        arguments: p.arguments as never,
        facts: { tenant: TENANT },
        expected: (ids) => [
          {
            sql: `INSERT INTO ${DRAFTS_TABLE} (tenant, broadcast_id, proposal_id, command_id, subject, body) VALUES (?, ?, ?, ?, ?, ?)`,
            params: [
              TENANT,
              'bc-spring',
              ids.proposalId,
              ids.commandIds[0],
              'Spring league opens 1 March',
              'Registration is open.',
            ],
          },
        ],
      },
    ]);
    for (const c of cases) it(c.name, c.run);
  });
});

describe('message.send', () => {
  const message = {
    channel: 'email',
    recipients: ['ada@acme.test', 'bob@acme.test'],
    attachments: [{ id: 'att-1', content_version: 'v3' }],
    mode: 'draft',
  };
  describe('mutation suite', () => {
    for (const c of mutationSuite(messageSend, message)) it(c.name, c.run);
  });
  describe('adapter contract (an executable message operation over the same scope)', () => {
    type Call = {
      readonly method: 'draft' | 'send';
      readonly to: readonly string[];
      readonly attachments: readonly string[];
    };
    const transport = recordingTransport<Call>();
    const args = z.strictObject({
      channel: z.enum(['email', 'sms']),
      recipients: z.array(z.string().min(3)).min(1),
      attachments: z.array(z.strictObject({ id: z.string().min(1), content_version: z.string().min(1) })),
      mode: z.enum(['draft', 'send']),
    });
    const executable = defineOperation({
      kind: 'message.send',
      scopeVersion: 1,
      effect: 'external',
      scope: messageSend.scope,
      fields: messageSend.fields,
      request: args,
      arguments: args,
      prepare: async (request) => ({ arguments: request, preview: request }),
      execute: async (a, ctx) =>
        ctx.command(a, (m) => {
          transport.record({
            method: m.mode,
            to: m.recipients,
            attachments: m.attachments.map((x) => `${x.id}@${x.content_version}`),
          });
          return { sent: m.mode === 'send' };
        }),
      reconcile: async () => ({ kind: 'pending' }),
    });
    const cases = adapterContract(executable, transport, [
      {
        name: 'a draft stays a draft',
        arguments: {
          channel: 'email',
          recipients: ['bob@acme.test', 'ada@acme.test'],
          attachments: [],
          mode: 'draft',
        },
        // Recipients are a set: the request reaches the transport as the arguments give them.
        expected: [{ method: 'draft', to: ['bob@acme.test', 'ada@acme.test'], attachments: [] }],
      },
      {
        name: 'a send sends, with its attachment version',
        arguments: {
          channel: 'email',
          recipients: ['ada@acme.test'],
          attachments: [{ id: 'att-1', content_version: 'v3' }],
          mode: 'send',
        },
        expected: [{ method: 'send', to: ['ada@acme.test'], attachments: ['att-1@v3'] }],
      },
    ]);
    for (const c of cases) it(c.name, c.run);
  });
});

describe('file.delete', () => {
  describe('mutation suite: one file', () => {
    for (const c of mutationSuite(fileDelete, {
      resource_id: '/exports/run-81/output.tmp',
      recursive: false,
      only: 'generated_files',
    }))
      it(c.name, c.run);
  });
  describe('mutation suite: a directory, recursively', () => {
    for (const c of mutationSuite(fileDelete, {
      resource_id: '/exports/run-81',
      recursive: true,
      only: 'all_files',
    }))
      it(c.name, c.run);
  });
});
