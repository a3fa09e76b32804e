import { z } from 'zod';
import { currencyCode, defineOperation, minorUnits, money } from '../../../src/index.js';

/** When every test refund is booked: a fact of the application, carried in the result. */
export const BOOKED_AT = '2026-12-01T10:30:00.000Z';

const refundArgs = z.strictObject({
  order_id: z.string().min(1),
  amount_minor: minorUnits().positive(),
  currency: currencyCode(),
});

/**
 * `refund.issue` (local): an operation that writes its handback per language, with the refunded
 * money and the booking date formatted for the reader.
 */
export function refundIssue() {
  let issued = 0;
  return defineOperation({
    kind: 'refund.issue',
    scopeVersion: 1,
    effect: 'local',
    scope: refundArgs.extend({ tenant: z.string().min(1), operation: z.literal('refund.issue') }).strict(),
    request: refundArgs,
    arguments: refundArgs,
    resource: (a) => `order:${a.order_id}`,
    async prepare(request) {
      return { arguments: request, preview: { amount: money(request.amount_minor, request.currency) } };
    },
    async execute(a) {
      issued += 1;
      return {
        refund_id: `rf_${issued}`,
        amount_minor: a.amount_minor,
        currency: a.currency,
        booked_at: BOOKED_AT,
      };
    },
    handback: {
      en: (o, text) =>
        o.kind === 'succeeded'
          ? `Refunded ${text.money(o.result.amount_minor, o.result.currency)} on ${text.date(o.result.booked_at)} (${o.result.refund_id}).`
          : `The refund was not made (${o.kind}).`,
      de: (o, text) =>
        o.kind === 'succeeded'
          ? `Erstattet: ${text.money(o.result.amount_minor, o.result.currency)} am ${text.date(o.result.booked_at)} (${o.result.refund_id}).`
          : `Die Erstattung wurde nicht ausgeführt (${text.t(`status.${o.kind}`)}).`,
      fr: (o, text) =>
        o.kind === 'succeeded'
          ? `Remboursé\u00a0: ${text.money(o.result.amount_minor, o.result.currency)} le ${text.date(o.result.booked_at)} (${o.result.refund_id}).`
          : `Le remboursement n’a pas été effectué (${text.t(`status.${o.kind}`)}).`,
    },
  });
}

const labelArgs = z.strictObject({ ticket_id: z.string().min(1), label: z.string().min(1) });

/** `ticket.label` (local): an operation with no handback of its own, so the catalog's sentences apply. */
export function ticketLabel() {
  return defineOperation({
    kind: 'ticket.label',
    scopeVersion: 1,
    effect: 'local',
    scope: labelArgs.extend({ tenant: z.string().min(1), operation: z.literal('ticket.label') }).strict(),
    request: labelArgs,
    arguments: labelArgs,
    editable: ['label'],
    resource: (a) => `ticket:${a.ticket_id}`,
    async prepare(request) {
      return { arguments: request, preview: { ...request } };
    },
    async execute() {
      return { labelled: true };
    },
  });
}
