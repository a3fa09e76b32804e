import type { AnyOperation, AnyReadTool } from '../index.js';
import { BroadcastBook } from './fakes/broadcasts.js';
import { InvoiceBook } from './fakes/invoice-book.js';
import { OrderBook } from './fakes/orders.js';
import { FakePaymentProvider } from './fakes/payment-provider.js';
import { emailBroadcastApplyDraft } from './operations/email-broadcast-apply-draft.js';
import { invoicePay } from './operations/invoice-pay.js';
import { orderRefundMissingDiscount } from './operations/order-refund.js';
import { listOpenInvoices } from './reads/list-open-invoices.js';

export { BroadcastBook } from './fakes/broadcasts.js';
export { InvoiceBook } from './fakes/invoice-book.js';
export { OrderBook } from './fakes/orders.js';
export * from './fakes/payment-provider.js';
export { DRAFTS_TABLE, emailBroadcastApplyDraft } from './operations/email-broadcast-apply-draft.js';
export { invoicePay, invoicePayScope } from './operations/invoice-pay.js';
export { fileDelete, messageSend } from './operations/message-send.js';
export { orderRefundMissingDiscount } from './operations/order-refund.js';
export { listOpenInvoices, type OpenInvoiceRow } from './reads/list-open-invoices.js';

/** The application state behind the demo operations: invoices, orders, broadcasts and a payment provider. */
export interface DemoWorld {
  readonly invoices: InvoiceBook;
  readonly orders: OrderBook;
  readonly broadcasts: BroadcastBook;
  readonly provider: FakePaymentProvider;
}

/** A fresh demo world; `journal` makes the provider's memory a file shared across processes. */
export function demoWorld(options: { journal?: string } = {}): DemoWorld {
  return {
    invoices: InvoiceBook.demo(),
    orders: OrderBook.demo(),
    broadcasts: BroadcastBook.demo(),
    provider: new FakePaymentProvider(options.journal ? { journal: options.journal } : {}),
  };
}

/** The three demo operations bound to a world. */
export function demoOperations(world: DemoWorld): AnyOperation[] {
  return [
    invoicePay({ invoices: world.invoices, provider: world.provider }),
    orderRefundMissingDiscount({ orders: world.orders, provider: world.provider }),
    emailBroadcastApplyDraft({ broadcasts: world.broadcasts }),
  ];
}

/** The demo's read tool, bound to a world: `list_open_invoices`. */
export function demoReadTools(world: DemoWorld): AnyReadTool[] {
  return [listOpenInvoices({ invoices: world.invoices })];
}
