import { demoOperations, demoWorld } from '../../../src/demo/demo-world.js';
import type { AgentBinding } from '../../../src/adapters/shared/agent-binding.js';
import type { Engine, EngineOptions, Proposal } from '../../../src/index.js';
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
  approve(proposalId: string, digest: string): ReturnType<Engine['proposals']['approveAndExecute']>;
  /** Overwrites a stored proposal's arguments behind the engine's back. */
  tamper(proposalId: string, argumentsJson: string): void;
  /** An acme admin grants the acme assistant one use of `invoice.pay` on one invoice (USD). */
  grantPayment(invoiceId: string): Promise<void>;
}

/** An engine on a real SQLite file with the adapter tests' operations. */
export async function adapterHarness(options: Partial<EngineOptions> = {}): Promise<AdapterHarness> {
  const world = demoWorld();
  const credits: IssuedCredit[] = [];
  const h = await harness({
    ...options,
    world,
    operations: [...demoOperations(world), creditIssue(credits)],
  });
  return {
    ...h,
    credits,
    executions: () => world.provider.calls + credits.length,
    binding: (runId) => ({
      tenant: 'acme',
      runId,
      agent: 'agent:acme-assistant',
    }),
    proposals: async () => (await h.engine.proposals.list('acme', { limit: 100 })).items,
    approve: (proposalId, digest) =>
      h.engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId,
        approver: approver(),
        seenDigest: digest,
      }),
    tamper: (proposalId, argumentsJson) => {
      h.store.database
        .prepare('UPDATE countersign_proposals SET arguments_json = ? WHERE id = ?')
        .run(argumentsJson, proposalId);
    },
    grantPayment: async (invoiceId) => {
      const granted = await h.engine.grants.create({
        tenant: 'acme',
        grantedBy: { id: 'user:admin@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] },
        subject: 'agent:acme-assistant',
        operations: ['invoice.pay'],
        resource: `invoice:${invoiceId}`,
        constraints: { currency: { equals: 'USD' } },
        cap: { uses: 1 },
        expiresAt: h.clock.now() + 3_600_000,
      });
      if (granted.kind !== 'granted') throw new Error(`the test grant was refused: ${granted.kind}`);
    },
  };
}
