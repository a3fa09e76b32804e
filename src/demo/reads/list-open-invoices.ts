import { z } from 'zod';
import { currencyCode, defineReadTool, formatMoney } from '../../index.js';
import type { InvoiceBook } from '../fakes/invoice-book.js';

/** One row of `list_open_invoices`: what the model needs to pick an invoice, nothing more. */
export interface OpenInvoiceRow {
  readonly invoice_id: string;
  readonly supplier: string;
  readonly amount_due: string;
  readonly currency: string;
}

/**
 * `list_open_invoices`: the tenant's open supplier invoices, so the assistant can find the one to
 * pay. The tenant comes from the scope (the server's token or binding); the model may only narrow
 * by currency. The supplier's account is left out: the model never needs it.
 */
export function listOpenInvoices(deps: { readonly invoices: InvoiceBook }) {
  return defineReadTool({
    name: 'list_open_invoices',
    description:
      'Lists the open supplier invoices (id, supplier, amount due). Use it to find the invoice to pay; optionally only one currency.',
    input: z.strictObject({
      currency: currencyCode().optional().describe('Only invoices in this ISO 4217 currency, e.g. USD'),
    }),
    read: ({ currency }, { tenant }): OpenInvoiceRow[] =>
      deps.invoices
        .open(tenant)
        .filter((i) => currency === undefined || i.currency === currency)
        .map((i) => ({
          invoice_id: i.id,
          supplier: i.supplierName,
          amount_due: formatMoney(i.dueMinor, i.currency),
          currency: i.currency,
        })),
  });
}
