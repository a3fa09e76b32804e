/** A paid order line with a discount that was not applied at checkout. */
export interface Order {
  readonly tenant: string;
  readonly id: string;
  readonly customerName: string;
  readonly paymentId: string;
  readonly paymentMethod: string;
  readonly currency: string;
  totalMinor: number;
  readonly lines: { readonly id: string; readonly product: string; readonly priceMinor: number }[];
  readonly discounts: {
    readonly id: string;
    readonly name: string;
    readonly lineId: string;
    amountMinor: number;
  }[];
  /** Minor units already refunded against the payment. */
  refundedMinor: number;
}

/**
 * One discount's refund, claimed by the proposal that executes it just before the provider is
 * called, so that one missed discount is refunded once however many proposals ask for it.
 */
export interface DiscountRefund {
  readonly tenant: string;
  readonly orderId: string;
  readonly discountId: string;
  readonly proposalId: string;
  readonly amountMinor: number;
  /** `in_flight` from the claim until the provider confirms (or reconciliation does). */
  readonly state: 'in_flight' | 'refunded';
}

/** The result of {@link OrderBook.claimRefund}. */
export type RefundClaim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'taken'; readonly refund: DiscountRefund };

/** The application's orders (in memory), looked up with the server's tenant. */
export class OrderBook {
  readonly #orders = new Map<string, Order>();
  /** Refunds of discounts, in flight or done, by the proposal that claimed them. */
  readonly #refunds = new Map<string, DiscountRefund>();

  add(order: Order): this {
    this.#orders.set(`${order.tenant}/${order.id}`, structuredClone(order));
    return this;
  }

  find(tenant: string, id: string): Order | undefined {
    return this.#orders.get(`${tenant}/${id}`);
  }

  /** The refund of a discount that is done or in flight, if any: another one must not start. */
  refundOf(tenant: string, orderId: string, discountId: string): DiscountRefund | undefined {
    for (const refund of this.#refunds.values()) {
      if (refund.tenant === tenant && refund.orderId === orderId && refund.discountId === discountId)
        return refund;
    }
    return undefined;
  }

  /**
   * Claims a discount's refund for one proposal, synchronously (no await between the check and
   * the claim, so two executions cannot both claim it). A proposal's own claim is claimed again.
   */
  claimRefund(claim: Omit<DiscountRefund, 'state'>): RefundClaim {
    const held = this.refundOf(claim.tenant, claim.orderId, claim.discountId);
    if (held && held.proposalId !== claim.proposalId) return { kind: 'taken', refund: held };
    if (!held) this.#refunds.set(claim.proposalId, { ...claim, state: 'in_flight' });
    return { kind: 'claimed' };
  }

  /**
   * Settles a proposal's claim: `refunded` counts the amount against its order (once);
   * `released` frees the discount, since the provider refunded nothing.
   */
  settleRefund(proposalId: string, result: 'refunded' | 'released'): void {
    const refund = this.#refunds.get(proposalId);
    if (!refund) return;
    if (result === 'released') {
      if (refund.state === 'in_flight') this.#refunds.delete(proposalId);
      return;
    }
    if (refund.state === 'refunded') return;
    this.#refunds.set(proposalId, { ...refund, state: 'refunded' });
    const order = this.find(refund.tenant, refund.orderId);
    if (order) order.refundedMinor += refund.amountMinor;
  }

  static demo(): OrderBook {
    const book = new OrderBook();
    for (const tenant of ['acme', 'globex']) {
      book.add({
        tenant,
        id: 'ord-81',
        customerName: 'Dana Whitfield',
        paymentId: 'pay-ord-81',
        paymentMethod: 'card •••• 4242',
        currency: 'USD',
        totalMinor: 18_000,
        lines: [{ id: 'line-1', product: 'Spring league registration', priceMinor: 18_000 }],
        discounts: [
          { id: 'disc-sibling', name: 'Sibling discount 15%', lineId: 'line-1', amountMinor: 2_700 },
        ],
        refundedMinor: 0,
      });
    }
    return book;
  }
}
