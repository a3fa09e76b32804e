import { type DemoWorld, demoOperations, demoWorld } from '../../../src/demo/demo-world.js';
import type { Actor, AnyOperation } from '../../../src/index.js';
import type { ProposalLimitsOption } from '../../../src/engine/index.js';

/**
 * Proposal quotas for the reliability suites: one agent proposes hundreds of proposals in a
 * moment here, far past the defaults. Raised, not off, so the quota check runs in every suite.
 */
export const RELIABILITY_LIMITS: ProposalLimitsOption = Object.freeze({
  perAgent: { proposalsPerMinute: 1_000_000, pending: 1_000_000 },
  perTenant: { proposalsPerMinute: 1_000_000, pending: 1_000_000 },
});

/** The tenant every reliability suite works in. */
export const TENANT = 'acme';

/** The invoice id of the i-th reliability invoice (`inv-r-00042`). */
export function invoiceId(i: number): string {
  return `inv-r-${String(i).padStart(5, '0')}`;
}

/**
 * The demo world plus `invoices` open invoices of {@link TENANT}, the same in every process that
 * builds it (ids, suppliers and amounts derive from the index), with the provider's memory in
 * `journal` when given: a file every process, and every killed process, shares.
 */
export function reliabilityWorld(options: {
  readonly invoices: number;
  readonly journal?: string;
}): DemoWorld {
  const world = demoWorld(options.journal ? { journal: options.journal } : {});
  for (let i = 0; i < options.invoices; i++) {
    world.invoices.add({
      tenant: TENANT,
      id: invoiceId(i),
      supplierName: `Supplier ${i % 17}`,
      supplierAccount: `acct-r-${String(i % 13).padStart(4, '0')}`,
      dueMinor: 1_000 + i * 7,
      currency: i % 5 === 0 ? 'EUR' : 'USD',
      status: 'open',
    });
  }
  return world;
}

/** The demo operations bound to a reliability world. */
export function reliabilityOperations(world: DemoWorld): AnyOperation[] {
  return demoOperations(world);
}

/** The agent that proposes. */
export const AGENT: Actor = Object.freeze({
  id: `agent:${TENANT}-assistant`,
  tenant: TENANT,
  kind: 'agent',
  roles: [],
});

/** An operator who may approve, decline, edit and reconcile. */
export function operator(name: string): Actor {
  return { id: `user:${name}@${TENANT}.test`, tenant: TENANT, kind: 'operator', roles: ['approver'] };
}

/** The system principal that reconciles after a recovery sweep. */
export const RECONCILER: Actor = Object.freeze({
  id: 'system:reconciler',
  tenant: TENANT,
  kind: 'system',
  roles: [],
});

/** The two operations the suites propose: an external payment and a local draft. */
export type Kind = 'external' | 'local';

/** The request, resource and operation of the i-th proposal of a kind. */
export function proposalInput(kind: Kind, i: number, runId: string) {
  return kind === 'external'
    ? {
        operation: 'invoice.pay',
        request: { invoice_id: invoiceId(i) },
        tenant: TENANT,
        resource: `invoice:${invoiceId(i)}`,
        requestedBy: AGENT.id,
        runId,
      }
    : {
        operation: 'email_broadcast.apply_draft',
        request: {
          broadcast_id: 'bc-spring',
          subject: `Season opens (${i})`,
          body: `See you Saturday, draft ${i}.`,
        },
        tenant: TENANT,
        resource: 'broadcast:bc-spring',
        requestedBy: AGENT.id,
        runId,
      };
}
