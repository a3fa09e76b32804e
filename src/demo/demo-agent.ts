import type { DemoWorld } from './demo-world.js';
import type { Engine } from '../engine/create-engine.js';
import type { Logger } from '../engine/engine-context.js';
import { newId } from '../engine/ids.js';

/** One scripted step: what the demo agent proposes, in which run. */
interface ScriptStep {
  readonly run: 'payables' | 'support' | 'marketing';
  readonly operation: string;
  readonly resource: string;
  readonly request: unknown;
  readonly note: string;
}

const SCRIPT: readonly ScriptStep[] = [
  {
    run: 'payables',
    operation: 'invoice.pay',
    resource: 'invoice:inv-104',
    // The model tries to choose the amount itself; the strict request schema refuses it.
    request: { invoice_id: 'inv-104', amount_minor: 24_000 },
    note: 'a request with a field the model may not set (refused, corrected next)',
  },
  {
    run: 'payables',
    operation: 'invoice.pay',
    resource: 'invoice:inv-104',
    request: { invoice_id: 'inv-104' },
    note: '240.49 USD to Northwind Paper Co.',
  },
  {
    run: 'payables',
    operation: 'invoice.pay',
    resource: 'invoice:inv-105',
    request: { invoice_id: 'inv-105' },
    note: '12,500.00 USD to Contoso Freight: needs two approvers (waits at 1 of 2), and a late fee lands afterwards, so revalidation fails',
  },
  {
    run: 'payables',
    operation: 'invoice.pay',
    resource: 'invoice:inv-106',
    request: { invoice_id: 'inv-106' },
    note: '88.00 EUR to Fabrikam Tools; the provider response will be lost (needs reconciliation)',
  },
  {
    run: 'payables',
    operation: 'invoice.pay',
    resource: 'invoice:inv-107',
    request: { invoice_id: 'inv-107' },
    note: '99.99 USD to Tailspin Toys',
  },
  {
    run: 'support',
    operation: 'order.refund_missing_discount',
    resource: 'order:ord-81',
    request: { order_id: 'ord-81', line_item_id: 'line-1', discount_id: 'disc-sibling' },
    note: 'refund a sibling discount missed at checkout',
  },
  {
    run: 'marketing',
    operation: 'email_broadcast.apply_draft',
    resource: 'broadcast:bc-spring',
    request: {
      broadcast_id: 'bc-spring',
      subject: 'Spring league opens Saturday, April 4',
      body: 'Hi everyone,\n\nThe spring league opens this Saturday at 9:00. Sheets 1–4 are reserved for league play; please arrive 15 minutes early to warm up.\n\nSee you on the ice,\nThe club team',
    },
    note: 'a draft an operator may edit before approving',
  },
];

/** What the demo agent did. */
export interface DemoAgentReport {
  readonly proposed: number;
  readonly tenantsScripted: readonly string[];
}

/**
 * The scripted demo agent: for every tenant with nothing pending, proposes a realistic mix through
 * the engine (invoice payments, a refund, an email draft, and one request the schema refuses). Then
 * it arranges two failures in the demo world: invoice inv-105 gains a late fee after it was proposed
 * (its approval ends `revision_required`), and the provider loses its response to the inv-106
 * payment (the approval ends `needs_reconciliation`; reconciling finds the payment).
 */
export async function runDemoAgent(options: {
  readonly engine: Engine;
  readonly world: DemoWorld;
  readonly tenants: readonly string[];
  readonly logger: Logger;
}): Promise<DemoAgentReport> {
  const { engine, world, logger } = options;
  let proposed = 0;
  const scripted: string[] = [];
  for (const tenant of options.tenants) {
    const pending = await engine.proposals.list(tenant, { status: 'pending', limit: 1 });
    if (pending.items.length > 0) continue;
    scripted.push(tenant);
    const runs = { payables: newId('run'), support: newId('run'), marketing: newId('run') };
    for (const step of SCRIPT) {
      const result = await engine.proposals.propose({
        operation: step.operation,
        request: step.request,
        tenant,
        resource: step.resource,
        requestedBy: `agent:${tenant}-assistant`,
        runId: runs[step.run],
      });
      if (result.kind === 'proposed') {
        proposed++;
        logger.info(
          {
            demo: true,
            tenant,
            proposalId: result.proposal.id,
            hash: result.proposal.short,
            note: step.note,
          },
          'demo agent proposed',
        );
      } else {
        logger.info(
          { demo: true, tenant, reason: result.reason, modelMessage: result.modelMessage, note: step.note },
          'demo agent request refused',
        );
      }
    }
  }
  for (const tenant of options.tenants) {
    const invoice = world.invoices.find(tenant, 'inv-105');
    if (invoice) invoice.dueMinor += 1_500;
  }
  world.provider.failWhen(
    (request) => request.reference === 'inv-106',
    'timeout_after_commit',
    options.tenants.length,
  );
  return { proposed, tenantsScripted: scripted };
}
