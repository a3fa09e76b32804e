import { z } from 'zod';
import { currencyCode, defineOperation, last4, minorUnits, money, moneyPreview } from '../../../src/index.js';

const args = z.strictObject({
  payee: z.string().min(1),
  account: z.string().min(1),
  amount_minor: minorUnits(),
  currency: currencyCode(),
});

/**
 * `payout.send`, for the review page's tests: an operator may edit the account (redacted to its
 * last four characters) and the amount; the preview declares its order (payee, amount, account,
 * memo), which is not the stored alphabetical one, and marks account and amount high-impact.
 */
export const reviewOperation = defineOperation({
  kind: 'payout.send',
  scopeVersion: 1,
  scope: args.extend({ tenant: z.string(), operation: z.literal('payout.send') }).strict(),
  fields: {
    account: { redact: last4, highImpact: true },
    amount: { highImpact: true },
    amount_minor: { highImpact: true, money: { currencyField: 'currency' } },
  },
  preview: z.strictObject({
    title: z.string(),
    payee: z.string(),
    amount: moneyPreview(),
    account: z.string(),
    memo: z.string(),
  }),
  request: z.strictObject({
    payee: z.string().min(1).max(64),
    account: z.string().min(1).max(64),
    amount_minor: minorUnits(),
  }),
  editable: ['account', 'amount_minor'],
  arguments: args,
  resource: (a) => `payee:${a.payee}`,
  prepare: async (request) => ({
    arguments: { ...request, currency: 'USD' },
    preview: {
      title: `Pay out to ${request.payee}`,
      payee: request.payee,
      amount: money(request.amount_minor, 'USD'),
      account: request.account,
      memo: 'monthly payout',
    },
  }),
});
