import type { Engine } from '../../engine/create-engine.js';
import { formatHandback, type HandbackItem } from '../../engine/handback.js';
import { type LocaleOptions, localizer } from '../../i18n/localizer.js';

/** The bounded handback of one or more earlier runs, as items and as one block of text. */
export interface HandbackContext {
  readonly items: readonly HandbackItem[];
  /** Empty when no proposal was made in those runs. */
  readonly text: string;
}

/**
 * Which runs to report on, how many proposals at most, and in which language: English unless
 * `locale` names another (`de`, `fr-CA`, …), with dates in `timeZone` (default UTC).
 */
export interface HandbackRequest extends LocaleOptions {
  readonly tenant: string;
  /** The run id (or ids) of the earlier turn(s) whose proposals the next turn should learn about. */
  readonly runId: string | readonly string[];
  /** At most this many proposals in all, newest first (default 20). */
  readonly limit?: number;
}

/**
 * Reads what happened to the proposals of earlier runs from the store — succeeded, revision
 * required, needs reconciliation, terminal failure with its correlation id, still waiting,
 * declined — and renders the operations' own safe handback text. The application puts this in the
 * next turn's context; the model is never resumed to execute anything.
 */
export async function handbackContext(engine: Engine, request: HandbackRequest): Promise<HandbackContext> {
  const runIds = typeof request.runId === 'string' ? [request.runId] : [...request.runId];
  const limit = request.limit ?? 20;
  const locale: LocaleOptions = {
    ...(request.locale !== undefined ? { locale: request.locale } : {}),
    ...(request.timeZone !== undefined ? { timeZone: request.timeZone } : {}),
  };
  const items: HandbackItem[] = [];
  for (const runId of runIds) {
    if (items.length >= limit) break;
    items.push(
      ...(await engine.proposals.handback(
        { tenant: request.tenant, runId, limit: limit - items.length },
        locale,
      )),
    );
  }
  if (items.length === 0) return { items, text: '' };
  const text = `${localizer(locale).t('handback.intro')}\n${formatHandback(items, locale)}`;
  return { items, text };
}
