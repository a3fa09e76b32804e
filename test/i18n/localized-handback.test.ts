import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { handbackMessages } from '../../src/adapters/ai-sdk/index.js';
import { handbackContext } from '../../src/adapters/shared/handback-context.js';
import {
  defineOperation,
  type Engine,
  formatHandback,
  OperationDefinitionError,
  type Proposal,
} from '../../src/index.js';
import { localizer } from '../../src/i18n/index.js';
import { agent, approver, type Harness, harness } from '../support/engine.js';
import { refundIssue, ticketLabel } from './support/localized-operations.js';

const NBSP = '\u00a0';
const NNBSP = '\u202f';

// The opening of an item a human approved and the application executed, per language.
const EXECUTED = {
  en: 'Approved by a human; the application executed it.',
  de: 'Von einem Menschen genehmigt; die Anwendung hat ihn ausgeführt.',
  fr: `Approuvée par une personne${NNBSP}; l’application l’a exécutée.`,
} as const;

let h: Harness;
beforeEach(async () => {
  const world = demoWorld();
  h = await harness({ world, operations: [...demoOperations(world), refundIssue(), ticketLabel()] });
});
afterEach(async () => {
  await h.close();
});

async function propose(engine: Engine, operation: string, request: object, resource: string, runId: string) {
  const r = await engine.proposals.propose({
    operation,
    request,
    tenant: 'acme',
    resource,
    requestedBy: agent().id,
    runId,
  });
  if (r.kind !== 'proposed') throw new Error(r.modelMessage);
  return r.proposal;
}

const refund = (runId = 'run-i18n') =>
  propose(
    h.engine,
    'refund.issue',
    { order_id: 'ord-7', amount_minor: 123456, currency: 'EUR' },
    'order:ord-7',
    runId,
  );

async function execute(p: Proposal): Promise<void> {
  const r = await h.engine.proposals.approveAndExecute({
    tenant: 'acme',
    proposalId: p.id,
    approver: approver(),
    seenDigest: p.digest,
  });
  if (r.kind !== 'completed') throw new Error(`expected completed, got ${r.kind}`);
}

const itemsIn = (locale?: string, timeZone?: string) =>
  h.engine.proposals.handback(
    { tenant: 'acme', runId: 'run-i18n' },
    { ...(locale ? { locale } : {}), ...(timeZone ? { timeZone } : {}) },
  );
const textsIn = async (locale?: string, timeZone?: string) =>
  (await itemsIn(locale, timeZone)).map((i) => i.text);

describe('engine.handback in a locale', () => {
  it('writes the waiting sentence in English, German and French', async () => {
    await refund();
    expect(await textsIn()).toEqual(['Waiting for a human decision.']);
    expect(await textsIn('de')).toEqual(['Wartet auf eine menschliche Entscheidung.']);
    expect(await textsIn('fr-FR')).toEqual(['En attente de la décision d’une personne.']);
  });

  it("passes the locale to the operation's own text: money and dates through Intl", async () => {
    await execute(await refund());
    expect((await textsIn()).map(loose)).toEqual([
      `${EXECUTED.en} Refunded €1,234.56 on Dec 1, 2026, 10:30 AM UTC (rf_1).`,
    ]);
    expect((await textsIn('en')).map(loose)).toEqual([
      `${EXECUTED.en} Refunded €1,234.56 on Dec 1, 2026, 10:30 AM UTC (rf_1).`,
    ]);
    expect(await textsIn('de-DE')).toEqual([
      `${EXECUTED.de} Erstattet: 1.234,56${NBSP}€ am 1. Dez. 2026, 10:30 UTC (rf_1).`,
    ]);
    expect(await textsIn('fr-FR')).toEqual([
      `${EXECUTED.fr} Remboursé${NBSP}: 1${NNBSP}234,56${NBSP}€ le 1 déc. 2026, 10:30 UTC (rf_1).`,
    ]);
    expect(await textsIn('de-DE', 'Europe/Berlin')).toEqual([
      `${EXECUTED.de} Erstattet: 1.234,56${NBSP}€ am 1. Dez. 2026, 11:30 MEZ (rf_1).`,
    ]);
    expect((await itemsIn('de-DE')).map((i) => i.language)).toEqual(['de-DE']);
  });

  it('falls back to English for a language without a catalog or a handback entry', async () => {
    await execute(await refund());
    expect((await textsIn('ja')).map(loose)).toEqual([
      `${EXECUTED.en} Refunded €1,234.56 on Dec 1, 2026, 10:30 AM UTC (rf_1).`,
    ]);
    expect((await itemsIn('ja')).map((i) => i.language)).toEqual(['en']);
  });

  it('writes the declined, superseded and expired sentences from the catalog', async () => {
    const declined = await refund();
    await h.engine.proposals.decline({
      tenant: 'acme',
      proposalId: declined.id,
      actor: approver(),
      reason: 'falscher Betrag',
    });
    expect(await textsIn('de')).toEqual(['Ein Mensch hat den Vorschlag abgelehnt: falscher Betrag']);
    expect(await textsIn('fr')).toEqual([`Une personne a refusé la proposition${NBSP}: falscher Betrag`]);

    const edited = await propose(
      h.engine,
      'ticket.label',
      { ticket_id: 't-1', label: 'urgent' },
      'ticket:t-1',
      'run-edit',
    );
    const edit = await h.engine.proposals.edit({
      tenant: 'acme',
      proposalId: edited.id,
      editor: approver('acme', 'eve'),
      changes: { label: 'later' },
    });
    if (edit.kind !== 'edited') throw new Error(`expected edited, got ${edit.kind}`);
    const [superseded] = (
      await h.engine.proposals.handback({ tenant: 'acme', runId: 'run-edit' }, { locale: 'de' })
    ).filter((i) => i.status === 'superseded');
    expect(superseded?.text).toBe(
      `Ein Operator hat ihn bearbeitet; der neue Vorschlag ist ${edit.proposal.id}.`,
    );

    await propose(h.engine, 'ticket.label', { ticket_id: 't-2', label: 'x' }, 'ticket:t-2', 'run-expire');
    h.clock.advance(31 * 60_000);
    const [expired] = await h.engine.proposals.handback(
      { tenant: 'acme', runId: 'run-expire' },
      { locale: 'fr' },
    );
    expect(expired?.text).toBe('La proposition a expiré avant que quiconque l’approuve.');
  });

  it("writes the default outcome sentence of an operation without a handback in the reader's language", async () => {
    const p = await propose(
      h.engine,
      'ticket.label',
      { ticket_id: 't-3', label: 'vip' },
      'ticket:t-3',
      'run-i18n',
    );
    await execute(p);
    expect(await textsIn()).toEqual([`${EXECUTED.en} The approved operation succeeded.`]);
    expect(await textsIn('de')).toEqual([`${EXECUTED.de} Der genehmigte Vorgang war erfolgreich.`]);
    expect(await textsIn('fr')).toEqual([`${EXECUTED.fr} L’opération approuvée a réussi.`]);
    expect((await itemsIn('fr')).map((i) => i.language)).toEqual(['fr']);
  });

  it("picks the operation's own text per language, and English for a language it does not write", async () => {
    const p = await propose(
      h.engine,
      'invoice.pay',
      { invoice_id: 'inv-104' },
      'invoice:inv-104',
      'run-i18n',
    );
    await execute(p);
    const [en] = await textsIn();
    const payment = /\(payment (pay_\d+)\)/.exec(en ?? '')?.[1];
    expect(en).toBe(`${EXECUTED.en} The invoice was paid (payment ${payment}).`);
    // invoice.pay writes English and German only: a French reader gets the whole item in English,
    // opening included, and is told so.
    const [fr] = await itemsIn('fr');
    expect([fr?.text, fr?.language]).toEqual([en, 'en']);
    const [de] = await itemsIn('de');
    expect([de?.text, de?.language]).toEqual([
      `${EXECUTED.de} Die Rechnung wurde bezahlt (Zahlung ${payment}).`,
      'de',
    ]);
  });
});

describe('formatHandback and the adapters in a locale', () => {
  it('labels statuses in the language of the block', async () => {
    await execute(await refund());
    const items = await h.engine.proposals.handback({ tenant: 'acme', runId: 'run-i18n' }, { locale: 'de' });
    const [item] = items;
    expect(formatHandback(items, { locale: 'de' })).toBe(
      `- refund.issue ${item?.proposalId} (${item?.short}): erfolgreich. ${EXECUTED.de} Erstattet: 1.234,56${NBSP}€ am 1. Dez. 2026, 10:30 UTC (rf_1).`,
    );
    expect(formatHandback([], { locale: 'fr' })).toBe(
      'Aucune proposition dans cette exécution pour l’instant.',
    );
    expect(formatHandback([])).toBe('No proposals in this run yet.');
  });

  it('gives the model English by default and the requested language when the application asks', async () => {
    const p = await refund();
    const english = await handbackContext(h.engine, { tenant: 'acme', runId: 'run-i18n' });
    expect(english.text).toBe(
      'What happened to the proposals you made earlier (reported by the application, never by a model):\n' +
        `- refund.issue ${p.id} (${p.short}): pending. Waiting for a human decision.`,
    );
    const french = await handbackMessages(h.engine, { tenant: 'acme', runId: 'run-i18n', locale: 'fr-CA' });
    expect(french).toEqual([
      {
        role: 'system',
        content:
          `Ce que sont devenues les propositions faites plus tôt (rapporté par l’application, jamais par un modèle)${NBSP}:\n` +
          `- refund.issue ${p.id} (${p.short})${NBSP}: en attente. En attente de la décision d’une personne.`,
      },
    ]);
  });
});

describe('an operation’s own texts per language', () => {
  const scope = z.strictObject({ tenant: z.string(), operation: z.literal('x.y') });

  it('refuses a per-language handback without English at definition', () => {
    expect(() =>
      defineOperation({
        kind: 'x.y',
        scopeVersion: 1,
        scope,
        handback: { de: () => 'nur Deutsch' } as never,
      }),
    ).toThrow(
      new OperationDefinitionError(
        'x.y: a per-language handback needs an `en` function (every other language falls back to it)',
      ),
    );
  });

  it('refuses a per-language entry that is not a function', () => {
    expect(() =>
      defineOperation({
        kind: 'x.y',
        scopeVersion: 1,
        scope,
        handback: { en: () => 'ok', fr: 'non' } as never,
      }),
    ).toThrow(new OperationDefinitionError('x.y: handback.fr must be a function'));
  });

  it('prefers the full tag over the language, and writes English when called without a localizer', () => {
    const op = defineOperation({
      kind: 'x.y',
      scopeVersion: 1,
      scope,
      handback: { en: () => 'colour', 'en-US': () => 'color', de: (_, t) => t.money(100, 'CHF') },
    });
    const done = { kind: 'succeeded', result: undefined } as const;
    expect(op.handback(done)).toBe('colour');
    expect(op.handback(done, localizer({ locale: 'en-US' }))).toBe('color');
    expect(op.handback(done, localizer({ locale: 'de-CH' }))).toBe(`CHF${NBSP}1.00`);
  });

  it('localizes the default sentences of every outcome kind', () => {
    const op = ticketLabel();
    const de = localizer({ locale: 'de' });
    expect(op.handback({ kind: 'revision_required', reason: 'Das Ticket ist geschlossen.' }, de)).toBe(
      'Der Vorgang wurde nicht ausgeführt: Das Ticket ist geschlossen. Ein neuer Vorschlag ist nötig.',
    );
    expect(op.handback({ kind: 'terminal_failure', correlationId: 'c-1', message: 'x' }, de)).toBe(
      'Der Vorgang ist fehlgeschlagen und wird nicht wiederholt (Korrelations-ID c-1).',
    );
    expect(op.handback({ kind: 'needs_reconciliation' }, localizer({ locale: 'fr' }))).toBe(
      `Le prestataire n’a pas confirmé l’opération${NNBSP}; elle est en cours de rapprochement. Ne la relancez pas.`,
    );
    expect(op.handback({ kind: 'revision_required', reason: 'Closed.' })).toBe(
      'The operation was not executed: Closed. A new proposal is needed.',
    );
  });
});

// ICU releases differ on the space before AM (U+202F or U+0020); everything else is compared exactly.
function loose(text: string | undefined): string {
  return (text ?? '').replace(NNBSP, ' ');
}
