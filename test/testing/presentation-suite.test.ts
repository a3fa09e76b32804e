import { AssertionError } from 'node:assert';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fileDelete, invoicePayScope, messageSend } from '../../src/demo/demo-world.js';
import { defineOperation, formatMoney, last4, money } from '../../src/index.js';
import { presentationSuite, type SuiteCase, TestingKitError } from '../../src/testing/index.js';

async function failuresOf(cases: readonly SuiteCase[]): Promise<{ name: string; message: string }[]> {
  const out: { name: string; message: string }[] = [];
  for (const c of cases) {
    try {
      await c.run();
    } catch (error) {
      expect(error).toBeInstanceOf(AssertionError);
      out.push({ name: c.name, message: (error as Error).message });
    }
  }
  return out;
}

// The payment scope of the third note, defined scope-only so each test renders its own preview.
const payInvoice = defineOperation({
  kind: 'invoice.pay',
  scopeVersion: 1,
  scope: invoicePayScope,
  fields: { destination_account_id: { redact: last4 } },
});
const PAYMENT = {
  invoice_id: 'inv-104',
  destination_account_id: 'acct-supplier-7',
  amount_minor: 24_049,
  currency: 'USD',
};
const NOT_SHOWN = {
  tenant: 'the console header shows the tenant',
  operation: 'the card title names the operation',
};

interface PaymentPreview {
  readonly title: string;
  readonly supplier: string;
  readonly invoice_id: string;
  readonly amount: { readonly minor: number; readonly currency: string; readonly display: string };
  readonly destination_account_id: string;
}

// A scope-only operation has no arguments schema: the kit hands render a plain record.
function goodPreview(record: Readonly<Record<string, unknown>>): PaymentPreview {
  const args = record as typeof PAYMENT;
  return {
    title: `Pay Northwind ${formatMoney(args.amount_minor, args.currency)}`,
    supplier: 'Northwind Paper Co.',
    invoice_id: args.invoice_id,
    amount: money(args.amount_minor, args.currency),
    destination_account_id: args.destination_account_id,
  };
}

describe('presentationSuite: a faithful preview passes', () => {
  it('every scope field is checked, money at full precision, and all cases pass', async () => {
    const cases = presentationSuite(payInvoice, PAYMENT, { render: goodPreview, notInPreview: NOT_SHOWN });
    expect(cases.map((c) => c.name)).toEqual([
      'renders a preview (JSON data with at least one field)',
      'shows $.amount_minor (24049 minor units of USD) as "240.49", never rounded',
      'shows $.currency "USD" verbatim',
      // Redacted fields keep their value out of test names.
      'shows $.destination_account_id verbatim',
      'shows $.invoice_id "inv-104" verbatim',
    ]);
    expect(await failuresOf(cases)).toEqual([]);
  });

  it('render gets the parsed arguments and the facts; a given preview works as well', async () => {
    const seen: unknown[] = [];
    const cases = presentationSuite(payInvoice, PAYMENT, {
      render: (args, facts) => {
        seen.push(args, facts.tenant);
        return goodPreview(args);
      },
      notInPreview: NOT_SHOWN,
      facts: { tenant: 'acme' },
    });
    expect(await failuresOf(cases)).toEqual([]);
    expect(seen).toEqual([PAYMENT, 'acme']);
    const given = presentationSuite(payInvoice, PAYMENT, {
      preview: goodPreview(PAYMENT),
      notInPreview: NOT_SHOWN,
    });
    expect(await failuresOf(given)).toEqual([]);
  });

  it('large amounts may be grouped or plain: 1,250,000 minor units as "12,500.00" or "12500.00"', async () => {
    const big = { ...PAYMENT, amount_minor: 1_250_000 };
    const grouped = presentationSuite(payInvoice, big, { render: goodPreview, notInPreview: NOT_SHOWN });
    expect(await failuresOf(grouped)).toEqual([]);
    const plain = presentationSuite(payInvoice, big, {
      render: (a) => ({
        ...goodPreview(a),
        title: 'Pay Northwind',
        amount: { minor: a.amount_minor, currency: 'USD', display: 'USD 12500.00' },
      }),
      notInPreview: NOT_SHOWN,
    });
    expect(await failuresOf(plain)).toEqual([]);
  });
});

describe('presentationSuite: a misleading preview FAILS the suite', () => {
  it('a preview missing a scope field fails the case for that field, naming it', async () => {
    const { destination_account_id: _hidden, ...missing } = goodPreview(PAYMENT);
    const failures = await failuresOf(
      presentationSuite(payInvoice, PAYMENT, { preview: missing, notInPreview: NOT_SHOWN }),
    );
    expect(failures).toEqual([
      {
        name: 'shows $.destination_account_id verbatim',
        message:
          'invoice.pay: the preview does not show $.destination_account_id ("acct-supplier-7") verbatim anywhere',
      },
    ]);
  });

  it.each([
    ['240 USD', 'rounded to whole units'],
    ['240.5 USD', 'rounded to one decimal'],
    ['$240', 'with a symbol'],
  ])('an amount shown as %s (%s) fails, and the message quotes it', async (display) => {
    const preview = {
      ...goodPreview(PAYMENT),
      title: 'Pay Northwind',
      amount: { minor: 24_049, currency: 'USD', display },
    };
    const failures = await failuresOf(
      presentationSuite(payInvoice, PAYMENT, { preview, notInPreview: NOT_SHOWN }),
    );
    expect(failures.map((f) => f.name)).toEqual([
      'shows $.amount_minor (24049 minor units of USD) as "240.49", never rounded',
    ]);
    expect(failures[0]!.message).toContain(
      'does not show $.amount_minor at full precision: expected "240.49"',
    );
    expect(failures[0]!.message).toContain(`$.amount.display ${JSON.stringify(display)}`);
  });

  it('a title that rounds the amount fails even when another field shows it exactly', async () => {
    const preview = { ...goodPreview(PAYMENT), title: 'Pay Northwind 240 USD' };
    const failures = await failuresOf(
      presentationSuite(payInvoice, PAYMENT, { preview, notInPreview: NOT_SHOWN }),
    );
    expect(failures).toHaveLength(1);
    expect(failures[0]!.message).toBe(
      'invoice.pay: the preview also shows $.amount_minor rounded: $.title "Pay Northwind 240 USD" (exact: "240.49 USD")',
    );
  });

  it('an amount whose exact value has fewer digits is not a rounding: 24000 shown as "240 USD" beside "240.00"', async () => {
    const even = { ...PAYMENT, amount_minor: 24_000 };
    const preview = { ...goodPreview(even), title: 'Pay Northwind 240 USD' };
    expect(
      await failuresOf(presentationSuite(payInvoice, even, { preview, notInPreview: NOT_SHOWN })),
    ).toEqual([]);
  });

  it('"1 contact" hiding a recipient fails for the hidden member', async () => {
    const args = {
      channel: 'email',
      recipients: ['ada@acme.test', 'bob@acme.test'],
      attachments: [{ id: 'att-1', content_version: 'v3' }],
      mode: 'send',
    } as const;
    const render = (shown: string) => ({
      title: `Send an email to ada@acme.test ${shown}`,
      channel: 'email',
      mode: 'send',
      attachments: ['att-1 (version v3)'],
    });
    const options = { notInPreview: NOT_SHOWN } as const;
    const hiding = await failuresOf(
      presentationSuite(messageSend, args, { ...options, render: () => render('and 1 contact') }),
    );
    expect(hiding.map((f) => f.name)).toEqual(['shows $.recipients[1] "bob@acme.test" verbatim']);
    const listing = await failuresOf(
      presentationSuite(messageSend, args, { ...options, render: () => render('and bob@acme.test') }),
    );
    expect(listing).toEqual([]);
  });

  it('a boolean needs a preview field of the same name, or a declared label', async () => {
    const args = {
      resource_id: '/exports/run-81/output.tmp',
      recursive: false,
      only: 'generated_files',
    } as const;
    const card = { title: 'Delete /exports/run-81/output.tmp', only: 'generated_files' };
    const unlabeled = await failuresOf(
      presentationSuite(fileDelete, args, { preview: card, notInPreview: NOT_SHOWN }),
    );
    expect(unlabeled).toEqual([
      {
        name: 'shows $.recursive false as a preview field "recursive"',
        message:
          'file.delete: the preview has no field "recursive" showing $.recursive = false; show it, or declare how it is shown in shownAs',
      },
    ]);
    expect(
      await failuresOf(
        presentationSuite(fileDelete, args, {
          preview: { ...card, recursive: false },
          notInPreview: NOT_SHOWN,
        }),
      ),
    ).toEqual([]);
    const labeled = presentationSuite(fileDelete, args, {
      preview: { ...card, scope: 'this file only' },
      notInPreview: NOT_SHOWN,
      shownAs: { recursive: (v) => (v ? 'and everything inside' : 'this file only') },
    });
    expect(await failuresOf(labeled)).toEqual([]);
    const wrongLabel = presentationSuite(fileDelete, args, {
      preview: { ...card, scope: 'and everything inside' },
      notInPreview: NOT_SHOWN,
      shownAs: { recursive: (v) => (v ? 'and everything inside' : 'this file only') },
    });
    expect((await failuresOf(wrongLabel)).map((f) => f.name)).toEqual([
      'shows $.recursive false as "this file only"',
    ]);
  });

  it('money without a currency sibling is declared explicitly, with a field or an ISO code', async () => {
    const payout = defineOperation({
      kind: 'payout.send',
      scopeVersion: 1,
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('payout.send'),
        payout_cents: z.number().int(),
        ccy: z.string(),
      }),
    });
    const args = { payout_cents: 9_999, ccy: 'EUR' };
    const preview = { text: 'Pay out 100 EUR', ccy: 'EUR' };
    // Undeclared, 9999 is a plain number and the preview does not show it.
    expect(
      (await failuresOf(presentationSuite(payout, args, { preview, notInPreview: NOT_SHOWN }))).map(
        (f) => f.name,
      ),
    ).toEqual(['shows $.payout_cents 9999 exactly']);
    const declared = await failuresOf(
      presentationSuite(payout, args, { preview, notInPreview: NOT_SHOWN, money: { payout_cents: 'ccy' } }),
    );
    expect(declared.map((f) => f.message)).toEqual([
      'payout.send: the preview does not show $.payout_cents at full precision: expected "99.99" (9999 minor units of EUR); it shows a rounded amount instead: $.text "Pay out 100 EUR"',
    ]);
    const yen = presentationSuite(
      payout,
      { payout_cents: 1_500, ccy: 'JPY' },
      {
        preview: { text: 'Pay out ¥1,500', ccy: 'JPY' },
        notInPreview: NOT_SHOWN,
        money: { payout_cents: 'JPY' },
      },
    );
    expect(await failuresOf(yen)).toEqual([]);
  });
});

describe('presentationSuite: exceptions are explicit and named', () => {
  it('a field left out on purpose needs a reason; its cases are not generated', () => {
    const names = presentationSuite(payInvoice, PAYMENT, {
      render: goodPreview,
      notInPreview: NOT_SHOWN,
    }).map((c) => c.name);
    expect(names.some((n) => n.includes('$.tenant') || n.includes('$.operation'))).toBe(false);
    expect(() =>
      presentationSuite(payInvoice, PAYMENT, {
        render: goodPreview,
        notInPreview: { ...NOT_SHOWN, currency: ' ' },
      }),
    ).toThrow(/notInPreview "currency" needs a reason/);
  });

  it('without notInPreview the tenant must be shown like any other field', async () => {
    const failures = await failuresOf(presentationSuite(payInvoice, PAYMENT, { render: goodPreview }));
    expect(failures.map((f) => f.name)).toEqual([
      'shows $.operation "invoice.pay" verbatim',
      'shows $.tenant "tenant-a" verbatim',
    ]);
  });

  it('an option naming a field the scope does not have is a mistake in the test', () => {
    expect(() =>
      presentationSuite(payInvoice, PAYMENT, { render: goodPreview, notInPreview: { tennant: 'typo' } }),
    ).toThrow(TestingKitError);
    expect(() =>
      presentationSuite(payInvoice, PAYMENT, { render: goodPreview, money: { amount: 'currency' } }),
    ).toThrow(/money names "amount", which is not a field of the scope/);
  });

  it('a preview that is not JSON data fails the render case', async () => {
    const failures = await failuresOf(
      presentationSuite(payInvoice, PAYMENT, {
        preview: { at: new Date(0) } as never,
        notInPreview: NOT_SHOWN,
      }),
    );
    expect(failures[0]?.name).toBe('renders a preview (JSON data with at least one field)');
    expect(failures[0]?.message).toContain('the preview is not JSON data');
  });
});
