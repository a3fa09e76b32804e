import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundIssue } from '../i18n/support/localized-operations.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';

const NBSP = '\u00a0';
const NNBSP = '\u202f';
const HUMAN = {
  en: 'Approved by a human; the application executed it.',
  de: 'Von einem Menschen genehmigt; die Anwendung hat ihn ausgeführt.',
  fr: `Approuvée par une personne${NNBSP}; l’application l’a exécutée.`,
} as const;

let h: ServerHarness;
let refund: { id: string; digest: string };
let pending: { id: string };
beforeAll(async () => {
  h = await serverHarness({ extraOperations: [refundIssue()] });
  const request = { operation: 'refund.issue', resource: 'order:ord-7', runId: 'run-locale' };
  refund = await proposeViaApi(h, 'acme', {
    ...request,
    request: { order_id: 'ord-7', amount_minor: 123456, currency: 'EUR' },
  });
  const approved = await call(h, 'POST', `/api/v1/proposals/${refund.id}/approve`, {
    token: h.tenants.acme.operators.approver.token,
    body: { seenDigest: refund.digest },
  });
  if (approved.status !== 200) throw new Error(`approve failed: ${JSON.stringify(approved.body)}`);
  pending = await proposeViaApi(h, 'acme', {
    operation: 'refund.issue',
    resource: 'order:ord-8',
    runId: 'run-locale',
    request: { order_id: 'ord-8', amount_minor: 500, currency: 'EUR' },
  });
});
afterAll(async () => {
  await h.close();
});

const read = (id: string, acceptLanguage?: string) =>
  call(h, 'GET', `/api/v1/proposals/${id}`, {
    token: h.tenants.acme.operators.viewer.token,
    ...(acceptLanguage !== undefined ? { headers: { 'accept-language': acceptLanguage } } : {}),
  });

describe('GET /api/v1/proposals/:id in the language of Accept-Language', () => {
  it('answers German to de: the operation’s text with money and date formatted for German', async () => {
    const r = await read(refund.id, 'de');
    expect(r.status).toBe(200);
    expect(r.body['handback']).toBe(
      `${HUMAN.de} Erstattet: 1.234,56${NBSP}€ am 1. Dez. 2026, 10:30 UTC (rf_1).`,
    );
    expect(r.body['handbackLanguage']).toBe('de');
    expect(r.headers.get('content-language')).toBe('de');
    expect(r.headers.get('vary')).toMatch(/accept-language/i);
    expect((await read(pending.id, 'de')).body['handback']).toBe('Wartet auf eine menschliche Entscheidung.');
  });

  it('answers French to fr-CA;q=0.9, en;q=0.5, formatted for French Canada', async () => {
    const r = await read(refund.id, 'fr-CA;q=0.9, en;q=0.5');
    expect(r.body['handback']).toBe(
      `${HUMAN.fr} Remboursé${NBSP}: 1${NBSP}234,56${NBSP}€ le 1 déc. 2026, 10 h 30 UTC (rf_1).`,
    );
    expect(r.headers.get('content-language')).toBe('fr-CA');
    expect((await read(pending.id, 'fr-CA;q=0.9, en;q=0.5')).body['handback']).toBe(
      'En attente de la décision d’une personne.',
    );
  });

  it('answers English to an unknown language, and without the header', async () => {
    for (const header of ['ja', 'xx-YY;q=0.8, *;q=0.1', undefined]) {
      const r = await read(refund.id, header);
      expect(r.body['handback']?.toString().replace(NNBSP, ' ')).toBe(
        `${HUMAN.en} Refunded €1,234.56 on Dec 1, 2026, 10:30 AM UTC (rf_1).`,
      );
      expect(r.headers.get('content-language')).toBe('en');
      expect((await read(pending.id, header)).body['handback']).toBe('Waiting for a human decision.');
    }
  });

  it('keeps the data itself as stored: only the handback text changes language', async () => {
    const de = await read(refund.id, 'de');
    const en = await read(refund.id, 'en');
    const { handback: _de, handbackLanguage: _deLanguage, ...deRest } = de.body;
    const { handback: _en, handbackLanguage: _enLanguage, ...enRest } = en.body;
    expect(deRest).toEqual(enRest);
    expect(de.body['outcome']).toEqual({
      kind: 'succeeded',
      result: {
        refund_id: 'rf_1',
        amount_minor: 123456,
        currency: 'EUR',
        booked_at: '2026-12-01T10:30:00.000Z',
      },
    });
  });

  it('localizes the handback of every item of a list the same way', async () => {
    const r = await call(h, 'GET', '/api/v1/proposals?runId=run-locale', {
      token: h.tenants.acme.operators.viewer.token,
      headers: { 'accept-language': 'de-DE' },
    });
    const items = r.body['items'] as { id: string; handback: string }[];
    expect(items.map((i) => [i.id, i.handback])).toEqual([
      [pending.id, 'Wartet auf eine menschliche Entscheidung.'],
      [refund.id, `${HUMAN.de} Erstattet: 1.234,56${NBSP}€ am 1. Dez. 2026, 10:30 UTC (rf_1).`],
    ]);
    expect(r.headers.get('content-language')).toBe('de-DE');
  });

  it('names the language each handback is really in: English where the operation writes no French', async () => {
    const invoice = freshInvoice(h.world, 'acme');
    const payment = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: invoice },
      resource: `invoice:${invoice}`,
      runId: 'run-mixed',
    });
    const approved = await call(h, 'POST', `/api/v1/proposals/${payment.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      body: { seenDigest: payment.digest },
    });
    expect(approved.status).toBe(200);
    const one = await read(payment.id, 'fr');
    expect(one.body['handback']).toMatch(
      /^Approved by a human; the application executed it\. The invoice was paid \(payment pay_\d+\)\.$/,
    );
    expect(one.body['handbackLanguage']).toBe('en');
    expect(one.headers.get('content-language')).toBe('en');
    const waiting = await proposeViaApi(h, 'acme', {
      operation: 'refund.issue',
      resource: 'order:ord-9',
      runId: 'run-mixed',
      request: { order_id: 'ord-9', amount_minor: 700, currency: 'EUR' },
    });
    const list = await call(h, 'GET', '/api/v1/proposals?runId=run-mixed', {
      token: h.tenants.acme.operators.viewer.token,
      headers: { 'accept-language': 'fr' },
    });
    const items = list.body['items'] as { id: string; handback: string; handbackLanguage: string }[];
    expect(items.map((i) => [i.id, i.handbackLanguage])).toEqual([
      [waiting.id, 'fr'],
      [payment.id, 'en'],
    ]);
    expect(items[0]?.handback).toBe('En attente de la décision d’une personne.');
    expect(list.headers.get('content-language')).toBe('fr, en');
  });

  it('documents Accept-Language in the OpenAPI document', async () => {
    const r = await call(h, 'GET', '/api/v1/openapi.json');
    const paths = r.body['paths'] as Record<string, { get: { parameters: { name: string; in: string }[] } }>;
    expect(paths['/api/v1/proposals/{id}']?.get.parameters).toContainEqual(
      expect.objectContaining({ name: 'Accept-Language', in: 'header' }),
    );
  });
});
