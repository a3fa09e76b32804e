/**
 * The work the contract itself asks of any design, whatever its code, for one approved
 * `invoice.pay`, done with countersign's own primitives and nothing else: the request, arguments,
 * preview and scope parsed by the operation's schemas; the canonical JSON of each and the scope and
 * contract digests; at the claim, the contract digest recomputed from the stored text and compared
 * with the one the approver saw, and the arguments parsed again; before the command, the invoice
 * revalidated and the scope rebuilt from the real provider request and compared; the outcome's
 * canonical JSON; and six audit events, each with its leaf and chain hash. No engine, no store
 * layer, no quotas, grants, routes or authorization. `floorFlow({ checks: true })` adds it to the
 * same-rows floor: the lowest cost of a design that stores the same rows and keeps the contract.
 */
import { canonicalize } from '../src/canonical/canonicalize.js';
import { sha256Hex } from '../src/canonical/digest.js';
import { chainEvent } from '../src/audit/chain.js';
import type { AuditDigests, AuditEventDraft, AuditStep, ChainHead } from '../src/audit/event.js';
import type { DemoWorld } from '../src/demo/demo-world.js';
import { invoicePay } from '../src/demo/operations/invoice-pay.js';
import type { PaymentRequest } from '../src/demo/fakes/payment-provider.js';
import { contractDigestOfCanonical } from '../src/engine/proposal.js';
import type { ProposalFacts } from '../src/operation/define-operation.js';

/** What a proposal stores of its contract, as the checks computed it. */
export interface CheckedContract {
  readonly argumentsJson: string;
  readonly previewJson: string;
  readonly scopeJson: string;
  readonly scopeDigest: string;
  readonly digest: string;
}

/** The contract's checks for one tenant's `invoice.pay` lifecycles, chaining that tenant's events. */
export class ContractChecks {
  readonly #operation: ReturnType<typeof invoicePay>;
  readonly #world: DemoWorld;
  #head: ChainHead | undefined;

  constructor(world: DemoWorld) {
    this.#world = world;
    this.#operation = invoicePay({ invoices: world.invoices, provider: world.provider });
  }

  /** The contract of paying `invoiceId` in full, frozen as a proposal stores it. */
  propose(invoiceId: string, runId: string): CheckedContract {
    const op = this.#operation;
    const request = op.request!.parse({ invoice_id: invoiceId });
    const invoice = this.#world.invoices.find('acme', request.invoice_id);
    if (!invoice) throw new Error(`no invoice ${invoiceId}`);
    const args = op.arguments!.parse({
      invoice_id: invoice.id,
      destination_account_id: invoice.supplierAccount,
      amount_minor: invoice.dueMinor,
      currency: invoice.currency,
    });
    const preview = op.preview!.parse({
      title: `Pay ${invoice.supplierName}`,
      supplier: invoice.supplierName,
      invoice_id: invoice.id,
      amount: { minor: invoice.dueMinor, currency: invoice.currency, display: '240.49 USD' },
      destination_account_id: invoice.supplierAccount,
    });
    const scope = op.scope.parse(op.toScope(args, this.#facts(runId)));
    const argumentsJson = canonicalize(args);
    const previewJson = canonicalize(preview);
    const scopeJson = canonicalize(scope);
    const scopeDigest = sha256Hex(scopeJson);
    return {
      argumentsJson,
      previewJson,
      scopeJson,
      scopeDigest,
      digest: this.#digest(runId, scopeDigest, argumentsJson, previewJson),
    };
  }

  /** The claim: the stored contract still has the digest the approver saw; its arguments parse. */
  claim(runId: string, stored: CheckedContract, seen: string): void {
    const digest = this.#digest(runId, stored.scopeDigest, stored.argumentsJson, stored.previewJson);
    if (digest !== seen) throw new Error('the stored contract changed');
    this.#operation.arguments!.parse(JSON.parse(stored.argumentsJson));
  }

  /** Before the command: the invoice is still as approved, and the real request has the approved scope. */
  command(runId: string, stored: CheckedContract, request: PaymentRequest): void {
    const invoice = this.#world.invoices.find('acme', request.reference);
    if (invoice?.status !== 'open' || invoice.dueMinor !== request.amount_minor)
      throw new Error('the invoice changed');
    const op = this.#operation;
    const requested = op.scope.parse(op.commandScope!(request as never, this.#facts(runId)));
    if (sha256Hex(canonicalize(requested)) !== stored.scopeDigest) throw new Error('the scope changed');
  }

  /** The outcome as stored. */
  outcome(paymentId: string): string {
    return canonicalize({ kind: 'succeeded', result: { payment_id: paymentId } });
  }

  /** Chains one event of this tenant: its leaf and chain hash, as a store row holds them. */
  event(draft: {
    readonly proposalId: string;
    readonly runId: string;
    readonly step: AuditStep;
    readonly actor: string;
    readonly attemptId: string | null;
    readonly digests: AuditDigests;
    readonly commandId: string | null;
    readonly detail: Record<string, unknown>;
    readonly id: string;
  }): { readonly seq: number; readonly leafHash: string; readonly chainHash: string } {
    const full: AuditEventDraft = {
      tenant: 'acme',
      proposalId: draft.proposalId,
      attemptId: draft.attemptId,
      runId: draft.runId,
      step: draft.step,
      actor: draft.actor,
      reason: draft.step === 'approved' ? 'approved' : null,
      digests: draft.digests,
      commandId: draft.commandId,
      detail: draft.detail,
      at: Date.now(),
    };
    const chained = chainEvent(this.#head, full, draft.id, undefined);
    this.#head = { seq: chained.seq, chainHash: chained.chainHash };
    return chained;
  }

  #facts(runId: string): ProposalFacts {
    return {
      tenant: 'acme',
      section: null,
      resource: 'invoice:*',
      requestedBy: 'agent:acme-assistant',
      runId,
      operation: 'invoice.pay',
    };
  }

  #digest(runId: string, scopeDigest: string, argumentsJson: string, previewJson: string): string {
    return contractDigestOfCanonical(
      {
        formatVersion: 3,
        operation: 'invoice.pay',
        scopeVersion: 1,
        viewVersion: 1,
        tenant: 'acme',
        section: null,
        resource: 'invoice:*',
        requestedBy: 'agent:acme-assistant',
        editedBy: null,
        runId,
        scopeDigest,
        approvals: { required: 1, roles: [] },
      },
      argumentsJson,
      previewJson,
    );
  }
}
