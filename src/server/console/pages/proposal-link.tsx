import type { Proposal } from '../../../engine/proposal.js';

/** A link to another proposal: its id and short hash. */
export function ProposalLink({ proposal: p }: { readonly proposal: Proposal }) {
  return (
    <>
      <a href={`/proposals/${p.id}`}>
        <code>{p.id}</code>
      </a>{' '}
      <span class="hash small">{p.short}</span>
    </>
  );
}
