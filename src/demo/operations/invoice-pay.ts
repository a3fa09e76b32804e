import { z } from 'zod';
import {
  currencyCode,
  defineOperation,
  formatMoney,
  last4,
  minorUnits,
  money,
  moneyPreview,
} from '../../index.js';
import type { FakePaymentProvider, PaymentRequest } from '../fakes/payment-provider.js';
import { IdempotencyConflictError, ProviderDeclinedError } from '../fakes/payment-provider.js';
import type { InvoiceBook } from '../fakes/invoice-book.js';

/** The payment scope of the third note: tenant, operation, invoice, destination, amount in minor units, currency. */
export const invoicePayScope = z.strictObject({
  tenant: z.string().min(1),
  operation: z.literal('invoice.pay'),
  invoice_id: z.string().min(1),
  destination_account_id: z.string().min(1),
  amount_minor: minorUnits().positive(),
  currency: currencyCode(),
});

/**
 * `invoice.pay` (external): the model names an invoice; the application resolves the supplier's
 * account, the amount due and the currency from its own records. The model never chooses them.
 */
export function invoicePay(deps: { readonly invoices: InvoiceBook; readonly provider: FakePaymentProvider }) {
  return defineOperation({
    kind: 'invoice.pay',
    scopeVersion: 1,
    viewVersion: 1,
    effect: 'external',
    // The provider returns the first payment for a repeated idempotency key: recovery re-sends a
    // command a crashed worker recorded instead of leaving it to reconciliation.
    provider: { deduplicates: 'idempotency_key' },
    expiresIn: '30m',
    scope: invoicePayScope,
    // The amount and where it goes are what an approver must not miss: the review page emphasises them.
    fields: {
      destination_account_id: { redact: last4, highImpact: true },
      amount: { highImpact: true },
      amount_minor: { highImpact: true, money: { currencyField: 'currency' } },
    },
    // The order the review page shows the preview in.
    preview: z.strictObject({
      title: z.string(),
      supplier: z.string(),
      amount: moneyPreview(),
      destination_account_id: z.string(),
      invoice_id: z.string(),
    }),
    request: z.strictObject({
      invoice_id: z.string().min(1).max(64).describe('The id of the open invoice to pay, e.g. inv-104'),
    }),
    arguments: z.strictObject({
      invoice_id: z.string().min(1),
      destination_account_id: z.string().min(1),
      amount_minor: minorUnits().positive(),
      currency: currencyCode(),
    }),
    resource: (a) => `invoice:${a.invoice_id}`,
    // Two-person rule: payments of 10,000.00 or more need two distinct approvers (never the
    // proposer or an editor). Frozen into each proposal's digest when it is made.
    approvals: (a) => (a.amount_minor >= 1_000_000 ? { required: 2 } : { required: 1 }),
    async prepare({ invoice_id }, ctx) {
      const invoice = deps.invoices.find(ctx.tenant, invoice_id);
      if (invoice?.status !== 'open') return ctx.reject(`No open invoice ${invoice_id}.`);
      return {
        arguments: {
          invoice_id,
          destination_account_id: invoice.supplierAccount,
          amount_minor: invoice.dueMinor,
          currency: invoice.currency,
        },
        preview: {
          title: `Pay ${invoice.supplierName} ${formatMoney(invoice.dueMinor, invoice.currency)}`,
          supplier: invoice.supplierName,
          invoice_id,
          amount: money(invoice.dueMinor, invoice.currency),
          destination_account_id: invoice.supplierAccount,
        },
      };
    },
    authorize: (actor) => actor.roles.includes('approver') || actor.roles.includes('admin'),
    async revalidate(args, ctx) {
      const invoice = deps.invoices.find(ctx.tenant, args.invoice_id);
      if (invoice?.status !== 'open')
        return ctx.revisionRequired(`Invoice ${args.invoice_id} is no longer open.`);
      if (invoice.dueMinor !== args.amount_minor || invoice.currency !== args.currency) {
        return ctx.revisionRequired(
          `Invoice ${args.invoice_id} now has ${formatMoney(invoice.dueMinor, invoice.currency)} due (approved ${formatMoney(args.amount_minor, args.currency)}).`,
        );
      }
      if (invoice.supplierAccount !== args.destination_account_id) {
        return ctx.revisionRequired(`The supplier account of invoice ${args.invoice_id} changed.`);
      }
      return ctx.valid();
    },
    // Every field of the real provider request reaches the scope (renamed where needed, the rest
    // spread), so an option the reviewer never saw makes the requested scope invalid.
    commandScope: (request: PaymentRequest, facts) => {
      const { reference, ...rest } = request;
      return { tenant: facts.tenant, operation: facts.operation, invoice_id: reference, ...rest };
    },
    async execute(args, ctx) {
      const request: PaymentRequest = {
        destination_account_id: args.destination_account_id,
        amount_minor: args.amount_minor,
        currency: args.currency,
        reference: args.invoice_id,
      };
      try {
        const payment = await ctx.command(request, (req, meta) =>
          deps.provider.pay(req, { idempotencyKey: meta.idempotencyKey }),
        );
        const invoice = deps.invoices.find(ctx.tenant, args.invoice_id);
        if (invoice) invoice.status = 'paid';
        return { payment_id: payment.paymentId };
      } catch (error) {
        // A definite refusal means nothing happened; anything else (a timeout) may have happened.
        if (error instanceof ProviderDeclinedError || error instanceof IdempotencyConflictError)
          return ctx.fail(error.message);
        throw error;
      }
    },
    async reconcile(attempt) {
      const payment = await deps.provider.lookup(attempt.idempotencyKey);
      return payment
        ? { kind: 'succeeded', result: { payment_id: payment.paymentId } }
        : { kind: 'not_found', message: 'The provider has no payment for this attempt; nothing was paid.' };
    },
    // One text per language (English is the fallback); the engine picks by the reader's locale.
    handback: {
      en: (outcome) => {
        switch (outcome.kind) {
          case 'succeeded':
            return `The invoice was paid (payment ${outcome.result.payment_id}).`;
          case 'needs_reconciliation':
            return 'The payment provider did not confirm the payment; an operator is reconciling it. Do not propose it again.';
          case 'revision_required':
            return `The payment was not made: ${outcome.reason} Propose again if it is still wanted.`;
          case 'terminal_failure':
            return `The payment failed and will not be retried (correlation id ${outcome.correlationId}).`;
        }
      },
      de: (outcome) => {
        switch (outcome.kind) {
          case 'succeeded':
            return `Die Rechnung wurde bezahlt (Zahlung ${outcome.result.payment_id}).`;
          case 'needs_reconciliation':
            return 'Der Zahlungsdienst hat die Zahlung nicht bestätigt; sie wird abgeglichen. Nicht erneut vorschlagen.';
          case 'revision_required':
            return `Die Zahlung wurde nicht ausgeführt: ${outcome.reason} Bei Bedarf neu vorschlagen.`;
          case 'terminal_failure':
            return `Die Zahlung ist fehlgeschlagen und wird nicht wiederholt (Korrelations-ID ${outcome.correlationId}).`;
        }
      },
    },
  });
}
