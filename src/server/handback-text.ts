import type { Engine } from '../engine/create-engine.js';
import { proposalHandback } from '../engine/handback.js';
import type { Proposal } from '../engine/proposal.js';
import type { LocaleOptions } from '../i18n/localizer.js';

/**
 * The safe handback sentence of one proposal, worded as the engine's `handback` words it for a run,
 * in `options.locale` (English by default).
 */
export function handbackText(engine: Engine, proposal: Proposal, options: LocaleOptions = {}): string {
  return proposalHandback(engine.operations.get(proposal.operation), proposal, options);
}
