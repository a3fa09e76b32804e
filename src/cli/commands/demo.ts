import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoOperations, demoWorld, invoicePay } from '../../demo/demo-world.js';
import { verifyAudit } from '../../ledger/verify-audit.js';
import { digest } from '../../canonical/digest.js';
import { freeze } from '../../canonical/freeze.js';
import { formatScopeChange } from '../../canonical/scope-diff.js';
import { createEngine, type Engine } from '../../engine/create-engine.js';
import type { Actor } from '../../operation/actor.js';
import { authorizeExecution } from '../../operation/authorize-execution.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { type Command, stringOption } from '../command.js';
import { formatAuditLine } from './audit-show.js';

const agent: Actor = { id: 'agent:acme-assistant', tenant: 'acme', kind: 'agent', roles: [] };
const ada: Actor = { id: 'user:ada@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] };
// The second approver of the two-person rule (invoice payments of 10,000.00 or more).
const grace: Actor = { id: 'user:grace@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] };

async function proposeOrThrow(
  engine: Engine,
  operation: string,
  request: unknown,
  resource: string,
  runId: string,
) {
  const r = await engine.proposals.propose({
    operation,
    request,
    tenant: 'acme',
    resource,
    requestedBy: agent.id,
    runId,
  });
  if (r.kind !== 'proposed') throw new Error(`demo: ${operation} was not proposed: ${r.modelMessage}`);
  return r.proposal;
}

/** `countersign demo`: a narrated walk-through of the three source notes on the real engine and store. */
export const demoCommand: Command = {
  path: ['demo'],
  summary: 'a narrated walk-through: freeze, approve, refuse a mutation, edit, decline, reconcile',
  help: `Usage: countersign demo [--db FILE]

Runs the three source notes on example operations against a real SQLite file (a temporary one
unless --db is given) and prints the short hash at every step: a 240.49 USD payment proposed,
approved and executed under one hash; a scope mutation refused with its diff; an edit (new hash,
approval again); a declined proposal; a lost provider response that ends needs_reconciliation
and is then reconciled. Inspect the file afterwards with \`countersign audit show\`.`,
  options: { db: { type: 'string' } },
  async run(args, io) {
    const say = (line = '') => io.stdout(`${line}\n`);
    const db = stringOption(args, 'db') ?? join(mkdtempSync(join(tmpdir(), 'countersign-demo-')), 'demo.db');
    const world = demoWorld();
    const store = new SqliteStore({ path: db });
    const engine = await createEngine({ store, operations: demoOperations(world) });
    try {
      say(`countersign demo — database ${db}`);
      say();
      say('1. A reference is not a freeze (note 1)');
      const live = { order_id: 'ord-81', amount: 40, customer: { id: 'cus-7' } };
      const alias = live;
      const frozen = freeze(live);
      const frozenHash = digest(frozen).short;
      live.amount = 400;
      say(`   frozen at pause: amount ${frozen.amount}, hash ${frozenHash}`);
      say(
        `   live dict changed: amount ${live.amount}; the alias shows ${alias.amount}, the freeze still ${frozen.amount}`,
      );
      say(`   hash of live ${digest(live).short} ≠ ${frozenHash}: resuming with the live dict is refused`);
      say();

      say('2. Propose, approve, execute: one short hash from proposal to execution (note 2)');
      const runId = 'run-demo-1';
      const payment = await proposeOrThrow(
        engine,
        'invoice.pay',
        { invoice_id: 'inv-104' },
        'invoice:inv-104',
        runId,
      );
      const amount = (payment.preview as { amount: { display: string } }).amount.display;
      say(`   proposed  ${payment.id}  invoice.pay ${amount} to acct-supplier-7   hash ${payment.short}`);
      const paid = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: payment.id,
        approver: ada,
        seenDigest: payment.digest,
      });
      if (paid.kind !== 'completed') throw new Error(`demo: payment not approved: ${paid.kind}`);
      say(`   approved  by ${ada.id}   hash ${paid.contract.short}`);
      say(`   executed  outcome ${paid.outcome.kind}   hash ${paid.contract.short}`);
      say();

      say('3. A field that changes after approval is refused with a named reason (note 3)');
      const approval = {
        operation: invoicePay(world),
        scopeVersion: payment.scopeVersion,
        scope: payment.scope,
        digest: payment.scopeDigest,
      };
      const scope = payment.scope as Record<string, unknown>;
      for (const [label, requested] of [
        ['amount 240.49 → 2,404.90', { ...scope, amount_minor: 240_490 }],
        ['another destination account', { ...scope, destination_account_id: 'acct-personal-2' }],
        ['an unreviewed option', { ...scope, expedite: true }],
      ] as const) {
        const decision = authorizeExecution(approval, requested);
        const detail =
          decision.kind === 'denied'
            ? decision.diff.map(formatScopeChange).join('; ') ||
              decision.issues.map((i) => `${i.path}: ${i.message}`).join('; ')
            : '';
        say(`   ${label.padEnd(28)} → ${decision.kind} ${decision.reason}${detail ? `  ${detail}` : ''}`);
      }
      say();

      say('4. Edit is a new freeze: new hash, approval required again');
      const draft = await proposeOrThrow(
        engine,
        'email_broadcast.apply_draft',
        { broadcast_id: 'bc-spring', subject: 'Season opens', body: 'See you Saturday.' },
        'broadcast:bc-spring',
        runId,
      );
      say(`   proposed  ${draft.id}  hash ${draft.short}`);
      const edited = await engine.proposals.edit({
        tenant: 'acme',
        proposalId: draft.id,
        editor: ada,
        changes: { subject: 'Season opens Saturday 9:00' },
      });
      if (edited.kind !== 'edited') throw new Error(`demo: edit failed: ${edited.kind}`);
      say(`   edited    ${edited.proposal.id}  hash ${edited.proposal.short} (supersedes ${draft.short})`);
      const old = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: draft.id,
        approver: ada,
        seenDigest: draft.digest,
      });
      say(`   approving the old card → ${old.kind === 'not_approvable' ? old.reason : old.kind}`);
      const applied = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: edited.proposal.id,
        approver: ada,
        seenDigest: edited.proposal.digest,
      });
      say(
        `   approved + executed ${edited.proposal.short} → ${applied.kind === 'completed' ? applied.outcome.kind : applied.kind}`,
      );
      say();

      say('5. Declined');
      const refund = await proposeOrThrow(
        engine,
        'order.refund_missing_discount',
        { order_id: 'ord-81', line_item_id: 'line-1', discount_id: 'disc-sibling' },
        'order:ord-81',
        runId,
      );
      await engine.proposals.decline({
        tenant: 'acme',
        proposalId: refund.id,
        actor: ada,
        reason: 'Customer already received store credit.',
      });
      say(`   ${refund.id}  hash ${refund.short} → declined`);
      say();

      say('6. Two approvers, then a lost provider response: needs_reconciliation, never an improvised retry');
      world.provider.failWhen((r) => r.reference === 'inv-105', 'timeout_after_commit');
      const big = await proposeOrThrow(
        engine,
        'invoice.pay',
        { invoice_id: 'inv-105' },
        'invoice:inv-105',
        runId,
      );
      const first = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: big.id,
        approver: ada,
        seenDigest: big.digest,
      });
      say(
        `   approved  ${big.id}  hash ${big.short} by ${ada.id} → ${first.kind === 'awaiting_approvals' ? `${first.given.length} of ${first.required} approvals; nothing ran yet` : first.kind}`,
      );
      const lost = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: big.id,
        approver: grace,
        seenDigest: big.digest,
      });
      say(
        `   executed  ${big.id}  hash ${big.short} → ${lost.kind === 'completed' ? lost.outcome.kind : lost.kind} (provider calls so far: ${world.provider.calls})`,
      );
      const reconciled = await engine.proposals.reconcile({ tenant: 'acme', proposalId: big.id, actor: ada });
      say(
        `   reconciled by idempotency key → ${reconciled.kind === 'reconciled' ? reconciled.outcome.kind : reconciled.kind} (provider calls: ${world.provider.calls})`,
      );
      say();

      say(`7. The audit trail of ${payment.id}`);
      for (const e of await engine.audit.events('acme', payment.id)) say(`   ${formatAuditLine(e)}`);
      const verification = await verifyAudit(store);
      say();
      say(
        `audit chain: ${verification.kind === 'intact' ? `intact (${verification.events} events)` : `BROKEN: ${verification.message}`}`,
      );
      say(`next: countersign audit show ${payment.id} --db ${db}`);
      return verification.kind === 'intact' ? 0 : 1;
    } finally {
      await engine.close();
    }
  },
};
