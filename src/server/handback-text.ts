import type { Engine } from '../engine/create-engine.js';
import { writtenProposalHandback } from '../engine/handback.js';
import type { Proposal } from '../engine/proposal.js';
import type { LocaleOptions } from '../i18n/localizer.js';
import type { WrittenHandback } from '../operation/localized-handback.js';

/**
 * The safe handback text of one proposal, worded as the engine's `handback` words it for a run,
 * in `options.locale` where the operation has text in it (English by default), and the language
 * it came out in.
 */
export function handbackText(
  engine: Engine,
  proposal: Proposal,
  options: LocaleOptions = {},
): WrittenHandback {
  return writtenProposalHandback(engine.operations.get(proposal.operation), proposal, options);
}
