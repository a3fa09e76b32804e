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

  /** The tenant's open invoices, by id: the application's query, always filtered by the server's tenant. */
  open(tenant: string): Invoice[] {
    return [...this.#invoices.values()]
      .filter((i) => i.tenant === tenant && i.status === 'open')
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((i) => ({ ...i }));
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
    // Each tenant also has invoices of its own, so a read for one tenant shows whose rows it got.
    book
      .add({
        tenant: 'acme',
        id: 'inv-108',
        supplierName: 'Acme Office Supplies',
        supplierAccount: 'acct-supplier-11',
        dueMinor: 31_500,
        currency: 'USD',
        status: 'open',
      })
      .add({
        tenant: 'globex',
        id: 'inv-201',
        supplierName: 'Globex Cooling Systems',
        supplierAccount: 'acct-supplier-21',
        dueMinor: 470_000,
        currency: 'EUR',
        status: 'open',
      })
      .add({
        tenant: 'globex',
        id: 'inv-202',
        supplierName: 'Initech Consulting',
        supplierAccount: 'acct-supplier-22',
        dueMinor: 12_000,
        currency: 'USD',
        status: 'open',
      });
    return book;
  }
}
