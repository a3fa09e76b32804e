import type { Outcome } from '../operation/outcome.js';
import type { AnyOperation } from '../operation/define-operation.js';
import { type LocaleOptions, type Localizer, localizer } from '../i18n/localizer.js';
import { defaultHandback } from '../operation/localized-handback.js';
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
  /** Safe text from the operation's `handback` (or a fixed sentence for undecided states). */
  readonly text: string;
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
  return page.items.map((p) => ({
    proposalId: p.id,
    operation: p.operation,
    short: p.short,
    status: p.status,
    text: proposalHandback(ctx.operations.get(p.operation), p, options),
  }));
}

/**
 * The safe handback sentence of one proposal: the operation's own text for an outcome, a fixed
 * sentence for the states without one, in the language of `options.locale` (English by default).
 *
 * @example
 * proposalHandback(engine.operations.get(p.operation), p, { locale: 'de-DE' });
 */
export function proposalHandback(
  operation: AnyOperation | undefined,
  p: Proposal,
  options: LocaleOptions = {},
): string {
  const text = localizer(options);
  if (p.outcome) {
    // An outcome of an operation this engine no longer registers still reads as what happened.
    return operation ? operation.handback(p.outcome as Outcome, text) : defaultHandback(p.outcome, text);
  }
  switch (p.status) {
    case 'pending':
      return text.t('handback.pending');
    case 'declined':
      return p.decisionNote
        ? text.t('handback.declined_note', { note: p.decisionNote })
        : text.t('handback.declined');
    case 'superseded':
      return text.t('handback.superseded', { next: p.supersededBy ?? '' });
    case 'expired':
      return text.t('handback.expired');
    default:
      return text.t('handback.executing');
  }
}

/** The handback items as one block of text for a system or user message, in `options.locale`. */
export function formatHandback(items: readonly HandbackItem[], options: LocaleOptions = {}): string {
  const text = localizer(options);
  if (items.length === 0) return text.t('handback.none');
  return items
    .map((i) =>
      text.t('handback.line', {
        operation: i.operation,
        proposalId: i.proposalId,
        short: i.short,
        status: statusLabel(text, i.status),
        text: i.text,
      }),
    )
    .join('\n');
}

function statusLabel(text: Localizer, status: string): string {
  // The items are plain data a caller may build; an unknown status is shown as it is.
  return isStatus(status) ? text.t(`status.${status}`) : status;
}

function isStatus(status: string): status is ProposalStatus {
  return (PROPOSAL_STATUSES as readonly string[]).includes(status);
}
