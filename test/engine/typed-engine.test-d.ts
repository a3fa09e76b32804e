/**
 * Type-level tests of a typed engine: `createEngine({ operations: [payInvoice, refund] })` accepts
 * only the registered kinds with their request types, and every proposal, contract and outcome
 * it returns is a union discriminated on `operation`. Checked by `tsc` (vitest's typecheck mode
 * and `npm run typecheck`); nothing here runs. Each `@ts-expect-error` is a misuse that must not
 * compile: if it ever compiles, the directive itself is the error.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import type { ProposalTool as AiSdkProposalTool } from '../../src/adapters/ai-sdk/index.js';
import { proposalTools as aiSdkTools } from '../../src/adapters/ai-sdk/index.js';
import { proposalTools as langGraphTools } from '../../src/adapters/langgraph/index.js';
import { createMcpServer } from '../../src/adapters/mcp/index.js';
import {
  handbackMessages,
  proposalTools as openAIAgentTools,
} from '../../src/adapters/openai-agents/index.js';
import {
  type AnyOperation,
  type ApproveAndExecuteResult,
  type ContractOf,
  createEngine,
  defineOperation,
  type Engine,
  type OperationKind,
  type Outcome,
  type OutcomeOf,
  type Proposal,
  type ProposalOf,
  type RequestOf,
  type Store,
} from '../../src/index.js';
import type { CountersignAppOptions } from '../../src/server/index.js';

const payInvoice = defineOperation({
  kind: 'invoice.pay',
  scopeVersion: 1,
  scope: z.strictObject({
    tenant: z.string(),
    operation: z.literal('invoice.pay'),
    invoice_id: z.string(),
    amount_minor: z.number().int(),
  }),
  request: z.strictObject({ invoice_id: z.string() }),
  arguments: z.strictObject({ invoice_id: z.string(), amount_minor: z.number().int() }),
  prepare: async (r) => ({
    arguments: { invoice_id: r.invoice_id, amount_minor: 24_049 },
    preview: { title: `Pay ${r.invoice_id}`, amount: '240.49 EUR' },
  }),
  execute: async () => ({ paymentId: 'pay_1' }),
});

const refund = defineOperation({
  kind: 'order.refund',
  scopeVersion: 1,
  scope: z.strictObject({
    tenant: z.string(),
    operation: z.literal('order.refund'),
    order_id: z.string(),
    reason: z.enum(['damaged', 'missing']),
  }),
  request: z.strictObject({ order_id: z.string(), reason: z.enum(['damaged', 'missing']) }),
  arguments: z.strictObject({ order_id: z.string(), reason: z.enum(['damaged', 'missing']) }),
  prepare: async (r) => ({
    arguments: r,
    preview: { title: `Refund ${r.order_id}`, refundTo: 'original payment' },
  }),
  execute: async () => ({ refundId: 're_1', refundedMinor: 1_250 }),
});

declare const store: Store;
type Ops = readonly (typeof payInvoice | typeof refund)[];
const facts = { tenant: 'acme', resource: 'invoice:*', requestedBy: 'agent:acme', runId: 'run_1' } as const;
const operator = { id: 'user:ada', tenant: 'acme', kind: 'operator', roles: ['approver'] } as const;
const approval = { tenant: 'acme', proposalId: 'prp_1', approver: operator, seenDigest: 'd' } as const;

describe('createEngine with defined operations', () => {
  test('keeps the registered kinds', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    expectTypeOf(engine).toEqualTypeOf<Engine<Ops>>();
    expectTypeOf<OperationKind<Ops>>().toEqualTypeOf<'invoice.pay' | 'order.refund'>();
    expectTypeOf<RequestOf<Ops, 'order.refund'>>().toEqualTypeOf<{
      order_id: string;
      reason: 'damaged' | 'missing';
    }>();
  });
});

describe('propose', () => {
  test('accepts a registered kind with its request, and types the proposal by kind', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const result = await engine.proposals.propose({
      ...facts,
      operation: 'invoice.pay',
      request: { invoice_id: 'inv-104' },
    });
    if (result.kind !== 'proposed') return;
    expectTypeOf(result.proposal.operation).toEqualTypeOf<'invoice.pay'>();
    expectTypeOf(result.proposal.preview).toEqualTypeOf<{
      readonly title: string;
      readonly amount: string;
    }>();
    expectTypeOf(result.proposal.arguments).toEqualTypeOf<{
      readonly invoice_id: string;
      readonly amount_minor: number;
    }>();
    expectTypeOf(result.proposal.request).toEqualTypeOf<{ readonly invoice_id: string }>();
    if (result.proposal.outcome?.kind === 'succeeded') {
      expectTypeOf(result.proposal.outcome.result).toEqualTypeOf<{ paymentId: string }>();
    }
    if (result.grant?.kind === 'approved_by_grant' && result.grant.outcome.kind === 'succeeded') {
      expectTypeOf(result.grant.outcome.result).toEqualTypeOf<{ paymentId: string }>();
    }
  });

  test('refuses an unknown kind', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    await engine.proposals.propose({
      ...facts,
      // @ts-expect-error 'invoice.pya' is not a registered kind
      operation: 'invoice.pya',
      request: { invoice_id: 'inv-104' },
    });
  });

  test('refuses a request field the kind does not have', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    await engine.proposals.propose({
      ...facts,
      operation: 'invoice.pay',
      // @ts-expect-error `amount` is not a field of invoice.pay's request
      request: { invoice_id: 'inv-104', amount: 100 },
    });
  });

  test("refuses another kind's request", async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    await engine.proposals.propose({
      ...facts,
      operation: 'invoice.pay',
      // @ts-expect-error order.refund's request is not invoice.pay's
      request: { order_id: 'o-1', reason: 'damaged' },
    });
  });

  test('refuses a missing request field', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    // @ts-expect-error order.refund needs a reason
    await engine.proposals.propose({ ...facts, operation: 'order.refund', request: { order_id: 'o-1' } });
  });

  test('refuses a wrong field type', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    // @ts-expect-error invoice_id is a string
    await engine.proposals.propose({ ...facts, operation: 'invoice.pay', request: { invoice_id: 104 } });
    await engine.proposals.propose({
      ...facts,
      operation: 'order.refund',
      // @ts-expect-error reason is one of the enum's values
      request: { order_id: 'o-1', reason: 'late' },
    });
  });

  test("refuses reading a preview field the kind's preview does not have", async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const result = await engine.proposals.propose({
      ...facts,
      operation: 'order.refund',
      request: { order_id: 'o-1', reason: 'missing' },
    });
    if (result.kind !== 'proposed') return;
    expectTypeOf(result.proposal.preview.refundTo).toEqualTypeOf<string>();
    // @ts-expect-error `amount` belongs to invoice.pay's preview, not order.refund's
    result.proposal.preview.amount;
  });

  test('keeps the preview read-only', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const result = await engine.proposals.propose({
      ...facts,
      operation: 'invoice.pay',
      request: { invoice_id: 'inv-104' },
    });
    if (result.kind !== 'proposed') return;
    // @ts-expect-error a frozen proposal's preview cannot be written
    result.proposal.preview.title = 'Pay someone else';
  });
});

describe('get, list, handback', () => {
  test('get returns a union that narrows on proposal.operation', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const proposal = await engine.proposals.get('acme', 'prp_1');
    expectTypeOf(proposal).toEqualTypeOf<ProposalOf<Ops> | undefined>();
    if (!proposal) return;
    expectTypeOf(proposal.operation).toEqualTypeOf<'invoice.pay' | 'order.refund'>();
    // @ts-expect-error without narrowing, `amount` is not on every preview
    proposal.preview.amount;
    switch (proposal.operation) {
      case 'invoice.pay':
        expectTypeOf(proposal.preview.amount).toEqualTypeOf<string>();
        expectTypeOf(proposal.arguments.amount_minor).toEqualTypeOf<number>();
        if (proposal.outcome?.kind === 'succeeded') {
          expectTypeOf(proposal.outcome.result).toEqualTypeOf<{ paymentId: string }>();
        }
        // @ts-expect-error refundTo is order.refund's
        proposal.preview.refundTo;
        break;
      case 'order.refund':
        expectTypeOf(proposal.preview.refundTo).toEqualTypeOf<string>();
        expectTypeOf(proposal.arguments.reason).toEqualTypeOf<'damaged' | 'missing'>();
        if (proposal.outcome?.kind === 'succeeded') {
          expectTypeOf(proposal.outcome.result).toEqualTypeOf<{ refundId: string; refundedMinor: number }>();
        }
        break;
      default:
        expectTypeOf(proposal).toBeNever();
    }
  });

  test('list with an operation types the page as that kind', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const refunds = await engine.proposals.list('acme', { operation: 'order.refund' });
    expectTypeOf(refunds.items).toEqualTypeOf<readonly ProposalOf<Ops, 'order.refund'>[]>();
    const all = await engine.proposals.list('acme');
    expectTypeOf(all.items).toEqualTypeOf<readonly ProposalOf<Ops>[]>();
    // @ts-expect-error not a registered kind
    await engine.proposals.list('acme', { operation: 'order.refnud' });
  });

  test('handback items name a registered kind', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const items = await engine.proposals.handback({ tenant: 'acme', runId: 'run_1' });
    expectTypeOf(items[0]!.operation).toEqualTypeOf<'invoice.pay' | 'order.refund'>();
  });
});

describe('approve and execute', () => {
  test('a claimed contract narrows to its arguments, and execute returns that kind’s outcome', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const approved = await engine.proposals.approve(approval);
    if (approved.kind === 'already_completed' && approved.outcome.kind === 'succeeded') {
      expectTypeOf(approved.outcome.result).toEqualTypeOf<
        { paymentId: string } | { refundId: string; refundedMinor: number }
      >();
    }
    if (approved.kind !== 'claimed') return;
    expectTypeOf(approved.contract).toEqualTypeOf<ContractOf<Ops>>();
    if (approved.contract.operation === 'invoice.pay') {
      expectTypeOf(approved.contract.arguments.amount_minor).toEqualTypeOf<number>();
      const outcome = await engine.proposals.execute(approved.contract);
      expectTypeOf(outcome).toEqualTypeOf<Outcome<{ paymentId: string }>>();
    }
  });

  test('approveAndExecute pairs each contract with its outcome', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const result = await engine.proposals.approveAndExecute(approval);
    expectTypeOf(result).toEqualTypeOf<ApproveAndExecuteResult<Ops>>();
    // Correlated, one member per kind: a refund's contract comes with a refund's outcome.
    type Refunded = Extract<ApproveAndExecuteResult<Ops>, { contract: { operation: 'order.refund' } }>;
    expectTypeOf<Refunded['outcome']>().toEqualTypeOf<Outcome<{ refundId: string; refundedMinor: number }>>();
  });
});

describe('edit and reconcile', () => {
  test('an edit returns a typed proposal; a reconciliation a typed outcome', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    const edited = await engine.proposals.edit({
      tenant: 'acme',
      proposalId: 'prp_1',
      editor: operator,
      changes: {},
    });
    if (edited.kind === 'edited') expectTypeOf(edited.proposal).toEqualTypeOf<ProposalOf<Ops>>();
    const reconciled = await engine.proposals.reconcile({
      tenant: 'acme',
      proposalId: 'prp_1',
      actor: operator,
    });
    if (reconciled.kind === 'reconciled') expectTypeOf(reconciled.outcome).toEqualTypeOf<OutcomeOf<Ops>>();
  });
});

describe('defineOperation: the scope the arguments build', () => {
  const scope = z.strictObject({
    tenant: z.string(),
    operation: z.literal('invoice.pay'),
    invoice_id: z.string(),
    amount_minor: z.number().int(),
  });
  const prepare = async () => ({ arguments: { invoice_id: 'inv-1', amount_minor: 1 }, preview: {} });

  test('arguments that are exactly the scope fields need no toScope', () => {
    defineOperation({
      kind: 'invoice.pay',
      scopeVersion: 1,
      scope,
      request: z.strictObject({}),
      arguments: z.strictObject({ invoice_id: z.string(), amount_minor: z.number().int() }),
      prepare,
    });
  });

  test('an argument the scope lacks, or a scope field no argument gives, needs toScope', () => {
    // @ts-expect-error destination is not a scope field: the strict scope would refuse it at propose
    defineOperation({
      kind: 'invoice.pay',
      scopeVersion: 1,
      scope,
      request: z.strictObject({}),
      arguments: z.strictObject({
        invoice_id: z.string(),
        amount_minor: z.number().int(),
        destination: z.string(),
      }),
      prepare: async () => ({
        arguments: { invoice_id: 'inv-1', amount_minor: 1, destination: 'x' },
        preview: {},
      }),
    });
    // @ts-expect-error amount_minor is a required scope field no argument gives
    defineOperation({
      kind: 'invoice.pay',
      scopeVersion: 1,
      scope,
      request: z.strictObject({}),
      arguments: z.strictObject({ invoice_id: z.string() }),
      prepare: async () => ({ arguments: { invoice_id: 'inv-1' }, preview: {} }),
    });
    // @ts-expect-error amount_minor is text in the arguments and a number in the scope
    defineOperation({
      kind: 'invoice.pay',
      scopeVersion: 1,
      scope,
      request: z.strictObject({}),
      arguments: z.strictObject({ invoice_id: z.string(), amount_minor: z.string() }),
      prepare: async () => ({ arguments: { invoice_id: 'inv-1', amount_minor: '1' }, preview: {} }),
    });
    defineOperation({
      kind: 'invoice.pay',
      scopeVersion: 1,
      scope,
      request: z.strictObject({}),
      arguments: z.strictObject({ invoice_id: z.string(), amount_minor: z.number().int(), note: z.string() }),
      toScope: ({ invoice_id, amount_minor }, facts) => ({
        tenant: facts.tenant,
        operation: 'invoice.pay',
        invoice_id,
        amount_minor,
      }),
      prepare: async () => ({ arguments: { invoice_id: 'inv-1', amount_minor: 1, note: 'n' }, preview: {} }),
    });
  });
});

describe('grant', () => {
  const admin = { id: 'user:root', tenant: 'acme', kind: 'operator', roles: ['admin'] } as const;
  const base = {
    tenant: 'acme',
    grantedBy: admin,
    subject: 'agent:acme',
    resource: 'invoice:*',
    expiresAt: 1,
  };

  test('names only registered kinds and the fields of their scopes, each with a constraint its type allows', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    await engine.grants.create({
      ...base,
      operations: ['invoice.pay'],
      constraints: { amount_minor: { max: 10_000 }, invoice_id: { oneOf: ['inv-104'] } },
      cap: { field: 'amount_minor', total: 50_000 },
    });
    await engine.grants.create({
      ...base,
      operations: ['order.refund'],
      constraints: { reason: { equals: 'damaged' } },
    });
    // @ts-expect-error a kind the engine does not have
    await engine.grants.create({ ...base, operations: ['invoice.pya'], constraints: {} });
    // @ts-expect-error a field the scope does not have
    await engine.grants.create({ ...base, operations: ['invoice.pay'], constraints: { amount: { max: 1 } } });
    await engine.grants.create({
      ...base,
      operations: ['invoice.pay'],
      // @ts-expect-error a range on a text field
      constraints: { invoice_id: { max: 1 } },
    });
    await engine.grants.create({
      ...base,
      operations: ['order.refund'],
      // @ts-expect-error a value the field cannot take
      constraints: { reason: { equals: 'lost' } },
    });
    await engine.grants.create({
      ...base,
      operations: ['invoice.pay'],
      constraints: {},
      // @ts-expect-error a cap over a field that is not a number
      cap: { field: 'invoice_id' },
    });
  });

  test('a grant over several kinds may constrain only the fields they share', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    await engine.grants.create({
      ...base,
      operations: ['invoice.pay', 'order.refund'],
      constraints: { tenant: { equals: 'acme' } },
    });
    await engine.grants.create({
      ...base,
      operations: ['invoice.pay', 'order.refund'],
      // @ts-expect-error amount_minor is not a field of order.refund's scope
      constraints: { amount_minor: { max: 1 } },
    });
  });

  test('an engine whose kinds are known only at run time takes any names (the engine checks them)', async () => {
    const operations: readonly AnyOperation[] = [payInvoice, refund];
    const engine = await createEngine({ store, operations });
    await engine.grants.create({ ...base, operations: ['anything'], constraints: { whatever: { max: 1 } } });
  });
});

describe('the untyped engine stays as it was', () => {
  test('one operation whose kind is only a string makes the engine untyped, not half-typed', async () => {
    const kind: string = 'note.add';
    const note = defineOperation({
      kind,
      scopeVersion: 1,
      scope: z.strictObject({ tenant: z.string(), operation: z.string() }),
    });
    const engine = await createEngine({ store, operations: [payInvoice, note] });
    expectTypeOf(engine).toEqualTypeOf<Engine>();
  });

  test('operations only known at run time give string kinds and unknown parts', async () => {
    const operations: readonly AnyOperation[] = [payInvoice, refund];
    const engine = await createEngine({ store, operations });
    expectTypeOf(engine).toEqualTypeOf<Engine>();
    const result = await engine.proposals.propose({
      ...facts,
      operation: 'anything',
      request: { what: 'ever' },
    });
    if (result.kind !== 'proposed') return;
    expectTypeOf(result.proposal).toEqualTypeOf<Proposal>();
    expectTypeOf(result.proposal.preview).toBeUnknown();
    expectTypeOf(result.proposal.operation).toEqualTypeOf<string>();
  });

  test('a typed engine is an engine: the server, MCP and anything that takes `Engine` accept it', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    expectTypeOf(engine).toExtend<Engine>();
    const untyped: Engine = engine;
    // Forwarding what a model sent, untyped, is what the plain view is for.
    await untyped.proposals.propose({
      ...facts,
      operation: 'invoice.pay',
      request: JSON.parse('{}') as unknown,
    });
    expectTypeOf(engine).toExtend<CountersignAppOptions['engine']>();
    createMcpServer(engine, { tenant: 'acme', agent: 'agent:acme', runId: 'run_1' });
  });
});

describe('adapters', () => {
  const binding = { tenant: 'acme', resource: 'invoice:*', runId: 'run_1', agent: 'agent:acme' } as const;

  test('take a typed engine and only its registered kinds', async () => {
    const engine = await createEngine({ store, operations: [payInvoice, refund] });
    openAIAgentTools(engine, binding, { operations: ['invoice.pay'] });
    langGraphTools(engine, binding, {
      operations: ['order.refund'],
      descriptions: { 'order.refund': 'Refund' },
    });
    expectTypeOf(aiSdkTools(engine, binding)).toEqualTypeOf<Record<string, AiSdkProposalTool>>();
    await handbackMessages(engine, { tenant: 'acme', runId: 'run_1' });
    // @ts-expect-error 'invoice.pya' is not a registered kind
    openAIAgentTools(engine, binding, { operations: ['invoice.pya'] });
    // @ts-expect-error a description for a kind the engine does not have
    aiSdkTools(engine, binding, { descriptions: { 'refund.create': 'Refund' } });
  });
});
