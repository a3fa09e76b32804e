/** An open or paid supplier invoice of one tenant. */
export interface Invoice {
  readonly tenant: string;
  readonly id: string;
  readonly supplierName: string;
  readonly supplierAccount: string;
  dueMinor: number;
  readonly currency: string;
  status: 'open' | 'paid';
}

/** The application's own invoice records (in memory), always looked up with the server's tenant. */
export class InvoiceBook {
  readonly #invoices = new Map<string, Invoice>();

  add(invoice: Invoice): this {
    this.#invoices.set(`${invoice.tenant}/${invoice.id}`, { ...invoice });
    return this;
  }

  find(tenant: string, id: string): Invoice | undefined {
    return this.#invoices.get(`${tenant}/${id}`);
  }

  /** Ready-made invoices for the demo and the tests: the note's 240.49 USD payment among them. */
  static demo(): InvoiceBook {
    const book = new InvoiceBook();
    for (const tenant of ['acme', 'globex']) {
      book
        .add({
          tenant,
          id: 'inv-104',
          supplierName: 'Northwind Paper Co.',
          supplierAccount: 'acct-supplier-7',
          dueMinor: 24_049,
          currency: 'USD',
          status: 'open',
        })
        .add({
          tenant,
          id: 'inv-105',
          supplierName: 'Contoso Freight',
          supplierAccount: 'acct-supplier-9',
          dueMinor: 1_250_000,
          currency: 'USD',
          status: 'open',
        })
        .add({
          tenant,
          id: 'inv-106',
          supplierName: 'Fabrikam Tools',
          supplierAccount: 'acct-supplier-3',
          dueMinor: 8_800,
          currency: 'EUR',
          status: 'open',
        })
        .add({
          tenant,
          id: 'inv-107',
          supplierName: 'Tailspin Toys',
          supplierAccount: 'acct-supplier-5',
          dueMinor: 99_99,
          currency: 'USD',
          status: 'open',
        });
    }
    return book;
  }
}
