import { z } from 'zod';
import { currencyCode, defineOperation, formatMoney, minorUnits, money, moneyPreview } from '../../index.js';
import type { DiscountRefund, OrderBook } from '../fakes/orders.js';
import {
  IdempotencyConflictError,
  ProviderDeclinedError,
  type FakePaymentProvider,
} from '../fakes/payment-provider.js';

/** Why a discount cannot be refunded (again), in words the model and the operator may read. */
function alreadyRefunded(refund: DiscountRefund, currency: string): string {
  const amount = formatMoney(refund.amountMinor, currency);
  return refund.state === 'refunded'
    ? `Discount ${refund.discountId} on order ${refund.orderId} was already refunded (${amount}).`
    : `A refund of discount ${refund.discountId} on order ${refund.orderId} (${amount}) is already in progress.`;
}

const destination = z.strictObject({ kind: z.literal('original_payment'), payment_id: z.string().min(1) });

/** The refund policy an approval depends on; its version is part of the scope. */
export interface RefundPolicy {
  readonly version: number;
  /** The most one refund may return, in minor units. */
  readonly maxRefundMinor: number;
}

/** The policy in force unless the application passes its own. */
export const DEFAULT_REFUND_POLICY: RefundPolicy = { version: 3, maxRefundMinor: 50_000 };

/**
 * `order.refund_missing_discount` (external): refunds a discount that was not applied at checkout.
 * The application computes the amount from the order and resolves "the original payment method" to
 * a concrete destination before anyone reviews it. One discount is refunded once: the order book
 * records each refund, so a second proposal for it is refused (prepare) or revised (revalidate).
 */
export function orderRefundMissingDiscount(deps: {
  readonly orders: OrderBook;
  readonly provider: FakePaymentProvider;
  /** Read at proposal and at execution: a policy change after approval means a new review. */
  readonly policy?: () => RefundPolicy;
}) {
  const policy = deps.policy ?? (() => DEFAULT_REFUND_POLICY);
  const argumentsSchema = z.strictObject({
    order_id: z.string().min(1),
    payment_id: z.string().min(1),
    line_item_id: z.string().min(1),
    discount_id: z.string().min(1),
    amount_minor: minorUnits().positive(),
    currency: currencyCode(),
    refund_destination: destination,
    // A policy value the approval depends on: "approved 27.00 under refund policy v3".
    refund_policy_version: z.number().int().positive(),
  });
  return defineOperation({
    kind: 'order.refund_missing_discount',
    scopeVersion: 1,
    effect: 'external',
    // The provider returns the first payment for a repeated idempotency key: recovery re-sends a
    // command a crashed worker recorded instead of leaving it to reconciliation.
    provider: { deduplicates: 'idempotency_key' },
    expiresIn: '1h',
    scope: argumentsSchema
      .extend({ tenant: z.string().min(1), operation: z.literal('order.refund_missing_discount') })
      .strict(),
    fields: {
      amount: { highImpact: true },
      amount_minor: { highImpact: true, money: { currencyField: 'currency' } },
      refund_destination: { highImpact: true },
    },
    preview: z.strictObject({
      title: z.string(),
      participant: z.string(),
      amount: moneyPreview(),
      refund_destination: z.string(),
      product: z.string(),
      discount: z.string(),
      payment_method: z.string(),
      current_order_total: moneyPreview(),
      resulting_order_total: moneyPreview(),
      policy: z.string(),
    }),
    request: z.strictObject({
      order_id: z.string().min(1).max(64),
      line_item_id: z.string().min(1).max(64),
      discount_id: z.string().min(1).max(64),
    }),
    arguments: argumentsSchema,
    resource: (a) => `order:${a.order_id}`,
    async prepare(request, ctx) {
      const order = deps.orders.find(ctx.tenant, request.order_id);
      if (!order) return ctx.reject(`No order ${request.order_id}.`);
      const line = order.lines.find((l) => l.id === request.line_item_id);
      if (!line) return ctx.reject(`Order ${order.id} has no line item ${request.line_item_id}.`);
      const discount = order.discounts.find((d) => d.id === request.discount_id && d.lineId === line.id);
      if (!discount) return ctx.reject(`Discount ${request.discount_id} does not apply to line ${line.id}.`);
      // One missed discount is refunded once: the application's own record says whether it was.
      const earlier = deps.orders.refundOf(ctx.tenant, order.id, discount.id);
      if (earlier) return ctx.reject(alreadyRefunded(earlier, order.currency));
      const refundable = order.totalMinor - order.refundedMinor;
      if (discount.amountMinor > refundable)
        return ctx.reject(
          `Only ${formatMoney(refundable, order.currency)} is refundable on order ${order.id}.`,
        );
      const inForce = policy();
      if (discount.amountMinor > inForce.maxRefundMinor) {
        return ctx.reject(
          `Refund policy v${inForce.version} allows at most ${formatMoney(inForce.maxRefundMinor, order.currency)} per refund.`,
        );
      }
      return {
        arguments: {
          order_id: order.id,
          payment_id: order.paymentId,
          line_item_id: line.id,
          discount_id: discount.id,
          amount_minor: discount.amountMinor,
          currency: order.currency,
          refund_destination: { kind: 'original_payment' as const, payment_id: order.paymentId },
          refund_policy_version: inForce.version,
        },
        preview: {
          title: `Refund ${formatMoney(discount.amountMinor, order.currency)} to ${order.customerName}`,
          participant: order.customerName,
          product: line.product,
          discount: discount.name,
          payment_method: order.paymentMethod,
          amount: money(discount.amountMinor, order.currency),
          current_order_total: money(order.totalMinor, order.currency),
          resulting_order_total: money(order.totalMinor - discount.amountMinor, order.currency),
          refund_destination: `original payment ${order.paymentId} (${order.paymentMethod})`,
          policy: `under refund policy v${inForce.version}`,
        },
      };
    },
    async revalidate(args, ctx) {
      const order = deps.orders.find(ctx.tenant, args.order_id);
      const discount = order?.discounts.find((d) => d.id === args.discount_id);
      if (!order || !discount)
        return ctx.revisionRequired(`Order ${args.order_id} or its discount no longer exists.`);
      // Another proposal for the same discount executed since this one was reviewed.
      const earlier = deps.orders.refundOf(ctx.tenant, order.id, discount.id);
      if (earlier && earlier.proposalId !== ctx.proposalId)
        return ctx.revisionRequired(alreadyRefunded(earlier, order.currency));
      if (policy().version !== args.refund_policy_version) {
        return ctx.revisionRequired(
          `The refund policy changed from v${args.refund_policy_version} to v${policy().version} since the review.`,
        );
      }
      if (discount.amountMinor !== args.amount_minor) {
        return ctx.revisionRequired(
          `The discount is now ${formatMoney(discount.amountMinor, order.currency)} (approved ${formatMoney(args.amount_minor, args.currency)}).`,
        );
      }
      if (order.totalMinor - order.refundedMinor < args.amount_minor) {
        return ctx.revisionRequired(
          `Only ${formatMoney(order.totalMinor - order.refundedMinor, order.currency)} is still refundable.`,
        );
      }
      return ctx.valid();
    },
    async execute(args, ctx) {
      // Claimed before the call and synchronously: two approvals racing past revalidation for
      // the same discount cannot both reach the provider.
      const claim = deps.orders.claimRefund({
        tenant: ctx.tenant,
        orderId: args.order_id,
        discountId: args.discount_id,
        proposalId: ctx.proposalId,
        amountMinor: args.amount_minor,
      });
      if (claim.kind === 'taken')
        return ctx.fail(`${alreadyRefunded(claim.refund, args.currency)} Nothing was refunded.`);
      try {
        const refund = await ctx.command(args, (a, meta) =>
          deps.provider.pay(
            {
              destination_account_id: a.refund_destination.payment_id,
              amount_minor: a.amount_minor,
              currency: a.currency,
              reference: `refund:${a.order_id}:${a.discount_id}`,
            },
            { idempotencyKey: meta.idempotencyKey },
          ),
        );
        deps.orders.settleRefund(ctx.proposalId, 'refunded');
        return { refund_id: refund.paymentId };
      } catch (error) {
        if (error instanceof ProviderDeclinedError || error instanceof IdempotencyConflictError) {
          deps.orders.settleRefund(ctx.proposalId, 'released');
          return ctx.fail(error.message);
        }
        // The provider may have refunded (a lost response): the claim stands until reconciled.
        throw error;
      }
    },
    async reconcile(attempt) {
      const refund = await deps.provider.lookup(attempt.idempotencyKey);
      deps.orders.settleRefund(attempt.proposalId, refund ? 'refunded' : 'released');
      return refund
        ? { kind: 'succeeded', result: { refund_id: refund.paymentId } }
        : {
            kind: 'not_found',
            message: 'The provider has no refund for this attempt; nothing was refunded.',
          };
    },
  });
}
