import type { Outcome } from '../operation/outcome.js';
import type { AnyOperation } from '../operation/define-operation.js';
import { type LocaleOptions, type Localizer, localizer } from '../i18n/localizer.js';
import { defaultHandback, type WrittenHandback } from '../operation/localized-handback.js';
import type { EngineContext } from './engine-context.js';
import type { Proposal } from './proposal.js';
import { listProposals } from './queries.js';
import { PROPOSAL_STATUSES, type ProposalStatus } from '../store/records.js';

/** What the next model turn may learn about one proposal of its run (`Kind`: a typed engine's kinds). */
export interface HandbackItem<Kind extends string = string> {
  readonly proposalId: string;
  readonly operation: Kind;
  readonly short: string;
  readonly status: string;
  /**
   * Safe text about the proposal: for a decided one, who approved it (a human, a standing grant)
   * and whether the application executed it, then the operation's `handback`; a fixed sentence for
   * the undecided states.
   */
  readonly text: string;
  /**
   * The BCP 47 tag of the language `text` is in: the locale asked for, or `en` when the operation
   * has no text in that language (then the whole item is English).
   */
  readonly language: string;
}

/** Which run's proposals to report on, and how many at most (default 20). */
export interface HandbackInput {
  readonly tenant: string;
  readonly runId: string;
  readonly limit?: number;
}

/**
 * The bounded handback context for the next model turn of a run: one safe sentence per proposal of
 * that run, newest first, at most `limit`. Text comes from the application, never from the model;
 * it is English unless `options.locale` asks for another language.
 */
export async function handback(
  ctx: EngineContext,
  input: HandbackInput,
  options: LocaleOptions = {},
): Promise<HandbackItem[]> {
  const page = await listProposals(ctx, input.tenant, { runId: input.runId, limit: input.limit ?? 20 });
  return page.items.map((p) => {
    const written = writtenProposalHandback(ctx.operations.get(p.operation), p, options);
    return {
      proposalId: p.id,
      operation: p.operation,
      short: p.short,
      status: p.status,
      text: written.text,
      language: written.language,
    };
  });
}

/**
 * The safe handback text of one proposal (see {@link writtenProposalHandback}), in the language
 * of `options.locale` where the operation has text in it (English by default).
 *
 * @example
 * proposalHandback(engine.operations.get(p.operation), p, { locale: 'de-DE' });
 */
export function proposalHandback(
  operation: AnyOperation | undefined,
  p: Proposal,
  options: LocaleOptions = {},
): string {
  return writtenProposalHandback(operation, p, options).text;
}

/**
 * The safe handback text of one proposal and the language it is in. Undecided states get a fixed
 * sentence (waiting for a human decision, declined, expired, superseded); a decided one opens with
 * who approved it and whether the application executed it ("Approved by a standing grant; the
 * application executed it."), followed by the operation's text for its outcome. When the operation
 * has no text in the language asked for, the whole item is written in English and says so.
 *
 * @example
 * writtenProposalHandback(op, p, { locale: 'fr' }); // { text: 'Approved by a human; …', language: 'en' }
 */
export function writtenProposalHandback(
  operation: AnyOperation | undefined,
  p: Proposal,
  options: LocaleOptions = {},
): WrittenHandback {
  const text = localizer(options);
  const fixed = (sentence: string): WrittenHandback => ({ text: sentence, language: text.locale });
  if (p.outcome) {
    const outcome = p.outcome as Outcome;
    // An outcome of an operation this engine no longer registers still reads as what happened.
    const told = operation
      ? operation.writeHandback(outcome, text)
      : { text: defaultHandback(outcome, text), language: text.locale };
    // The opening is written in the language the operation's text came out in: one item, one language.
    const inTold = told.language === text.locale ? text : localizer({ ...options, locale: told.language });
    const opening = openingOf(inTold, p.approvalKind, outcome.kind === 'revision_required' ? 'not' : 'done');
    return { text: opening ? `${opening} ${told.text}` : told.text, language: told.language };
  }
  switch (p.status) {
    case 'pending':
      return fixed(text.t('handback.pending'));
    case 'declined':
      return fixed(
        p.decisionNote
          ? text.t('handback.declined_note', { note: p.decisionNote })
          : text.t('handback.declined'),
      );
    case 'superseded':
      return fixed(text.t('handback.superseded', { next: p.supersededBy ?? '' }));
    case 'expired':
      return fixed(text.t('handback.expired'));
    default:
      return fixed(openingOf(text, p.approvalKind, 'running') ?? text.t('handback.executing'));
  }
}

// Who approved a decided proposal, and what the application did with it. A proposal with an
// outcome but no recorded approval (written before approvals were recorded) gets no opening.
function openingOf(
  text: Localizer,
  approvalKind: Proposal['approvalKind'],
  executed: 'running' | 'done' | 'not',
): string | undefined {
  if (approvalKind === null) return undefined;
  const by = approvalKind === 'grant' ? 'granted' : 'approved';
  const what = { running: 'executing', done: 'executed', not: 'not_executed' } as const;
  return text.t(`handback.${by}_${what[executed]}`);
}

/**
 * The handback items as one block of text for a system or user message, in `options.locale`; an
 * item written in another language (its operation has no text in this one) has its whole line,
 * status label included, in that language.
 */
export function formatHandback(items: readonly HandbackItem[], options: LocaleOptions = {}): string {
  const text = localizer(options);
  if (items.length === 0) return text.t('handback.none');
  return items
    .map((i) => {
      const line = i.language === text.locale ? text : localizer({ ...options, locale: i.language });
      return line.t('handback.line', {
        operation: i.operation,
        proposalId: i.proposalId,
        short: i.short,
        status: statusLabel(line, i.status),
        text: i.text,
      });
    })
    .join('\n');
}

function statusLabel(text: Localizer, status: string): string {
  // The items are plain data a caller may build; an unknown status is shown as it is.
  return isStatus(status) ? text.t(`status.${status}`) : status;
}

function isStatus(status: string): status is ProposalStatus {
  return (PROPOSAL_STATUSES as readonly string[]).includes(status);
}
