import type { Actor } from '../operation/actor.js';
import type { Engine } from './create-engine.js';
import type { Proposal } from './proposal.js';
import type { ListInput, ProposalPage } from './queries.js';

/**
 * Who reads: a principal of one tenant. An agent reads only the proposals it made; an operator
 * (or the system) reads every proposal of its tenant. The HTTP API and the MCP server both pass
 * their caller through the functions below, so the two cannot answer the same read differently.
 */
export type Reader = Pick<Actor, 'id' | 'tenant' | 'kind'>;

/** Whether `reader` may see `proposal` (its tenant must match; an agent must be its requester). */
export function canRead(reader: Reader, proposal: Proposal): boolean {
  return proposal.tenant === reader.tenant && (reader.kind !== 'agent' || proposal.requestedBy === reader.id);
}

/**
 * One proposal as `reader` may see it, or `undefined`: another tenant's proposal and, for an
 * agent, another agent's proposal read exactly like a missing id.
 */
export async function readProposal(
  engine: Pick<Engine, 'proposals'>,
  reader: Reader,
  proposalId: string,
): Promise<Proposal | undefined> {
  const proposal = await engine.proposals.get(reader.tenant, proposalId);
  return proposal && canRead(reader, proposal) ? proposal : undefined;
}

/**
 * A page of the proposals `reader` may see, newest first. An agent's page is narrowed in the
 * store, not filtered afterwards, so its `nextCursor` is always one of its own proposals and never
 * names (or dates) another agent's.
 */
export async function listReadable(
  engine: Pick<Engine, 'proposals'>,
  reader: Reader,
  input: Omit<ListInput, 'requestedBy'> = {},
): Promise<ProposalPage> {
  const page = await engine.proposals.list(reader.tenant, {
    ...input,
    ...(reader.kind === 'agent' ? { requestedBy: reader.id } : {}),
  });
  // The store already narrowed the page; this keeps a store that ignored the filter from leaking.
  const items = page.items.filter((p) => canRead(reader, p));
  if (items.length === page.items.length) return page;
  return { items };
}
