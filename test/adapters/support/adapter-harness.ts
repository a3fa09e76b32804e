import { demoOperations, demoWorld } from '../../../examples/index.js';
import type { AgentBinding } from '../../../src/adapters/shared/agent-binding.js';
import type { Engine, Proposal } from '../../../src/index.js';
import { approver, type Harness, harness } from '../../support/engine.js';
import { creditIssue, type IssuedCredit } from './credit-operation.js';

/** The engine harness with the demo operations plus `credit.issue`, and the credits it issued. */
export interface AdapterHarness extends Harness {
  readonly credits: IssuedCredit[];
  /** How many times any executor ran: provider calls plus credits issued. */
  executions(): number;
  /** The binding of an agent run of tenant acme. */
  binding(runId: string): AgentBinding;
  /** Every proposal of tenant acme, newest first. */
  proposals(): Promise<readonly Proposal[]>;
  /** Approves (as an acme approver who saw `digest`) and executes. */
  approve(proposalId: string, digest: string): ReturnType<Engine['approveAndExecute']>;
  /** Overwrites a stored proposal's arguments behind the engine's back. */
  tamper(proposalId: string, argumentsJson: string): void;
}

/** An engine on a real SQLite file with the adapter tests' operations. */
export async function adapterHarness(): Promise<AdapterHarness> {
  const world = demoWorld();
  const credits: IssuedCredit[] = [];
  const h = await harness({ world, operations: [...demoOperations(world), creditIssue(credits)] });
  return {
    ...h,
    credits,
    executions: () => world.provider.calls + credits.length,
    binding: (runId) => ({
      tenant: 'acme',
      runId,
      agent: 'agent:acme-assistant',
    }),
    proposals: async () => (await h.engine.list('acme', { limit: 100 })).items,
    approve: (proposalId, digest) =>
      h.engine.approveAndExecute({ tenant: 'acme', proposalId, approver: approver(), seenDigest: digest }),
    tamper: (proposalId, argumentsJson) => {
      h.store.database
        .prepare('UPDATE countersign_proposals SET arguments_json = ? WHERE id = ?')
        .run(argumentsJson, proposalId);
    },
  };
}
