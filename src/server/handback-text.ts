import type { Engine } from '../engine/create-engine.js';
import { proposalHandback } from '../engine/handback.js';
import type { Proposal } from '../engine/proposal.js';

/** The safe handback sentence of one proposal, worded as the engine's `handback` words it for a run. */
export function handbackText(engine: Engine, proposal: Proposal): string {
  return proposalHandback(engine.operations.get(proposal.operation), proposal);
}
