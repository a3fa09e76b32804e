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

/** The application's orders (in memory), looked up with the server's tenant. */
export class OrderBook {
  readonly #orders = new Map<string, Order>();

  add(order: Order): this {
    this.#orders.set(`${order.tenant}/${order.id}`, structuredClone(order));
    return this;
  }

  find(tenant: string, id: string): Order | undefined {
    return this.#orders.get(`${tenant}/${id}`);
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
