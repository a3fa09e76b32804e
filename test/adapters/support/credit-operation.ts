import { z } from 'zod';
import { currencyCode, defineOperation, formatMoney, minorUnits, money } from '../../../src/index.js';

/** One credit the executor issued. */
export interface IssuedCredit {
  readonly customer_id: string;
  readonly amount_minor: number;
  readonly currency: string;
}

/**
 * `credit.issue` (local): an operation whose model-facing request carries the amount itself, so a
 * test can have the model change the amount after a human approved the first one.
 */
export function creditIssue(issued: IssuedCredit[]) {
  const args = z.strictObject({
    customer_id: z.string().min(1),
    amount_minor: minorUnits().positive(),
    currency: currencyCode(),
  });
  return defineOperation({
    kind: 'credit.issue',
    scopeVersion: 1,
    effect: 'local',
    scope: args.extend({ tenant: z.string().min(1), operation: z.literal('credit.issue') }).strict(),
    request: args,
    arguments: args,
    resource: (a) => `customer:${a.customer_id}`,
    async prepare(request) {
      return {
        arguments: request,
        preview: {
          title: `Credit ${formatMoney(request.amount_minor, request.currency)} to ${request.customer_id}`,
          customer_id: request.customer_id,
          amount: money(request.amount_minor, request.currency),
        },
      };
    },
    async execute(a) {
      issued.push({ ...a });
      return { credit_id: `cr_${issued.length}` };
    },
    handback: (outcome) =>
      outcome.kind === 'succeeded'
        ? `The credit was issued (${outcome.result.credit_id}).`
        : `The credit was not issued (${outcome.kind}).`,
  });
}
