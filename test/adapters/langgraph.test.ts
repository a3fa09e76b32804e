import { type BaseMessage, HumanMessage, isAIMessage, ToolMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { createReactAgent, ToolNode } from '@langchain/langgraph/prebuilt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScriptedChatModel } from '../../examples/langgraph/scripted-chat-model.js';
import {
  BindingError,
  handbackMessages,
  type ProposalTool,
  proposalMade,
  proposalTools,
} from '../../src/adapters/langgraph/index.js';
import { forgeNextAuditEvent } from '../support/forge-audit.js';
import { type AdapterHarness, adapterHarness } from './support/adapter-harness.js';
import { plannedScript, type TurnPlan } from './support/planned-script.js';

let h: AdapterHarness;
beforeEach(async () => {
  h = await adapterHarness();
});
afterEach(async () => {
  await h.close();
});

/** The classic agent ⇄ tools graph, ending the turn at a new proposal. No checkpointer: nothing has to survive the turn. */
function graphFor(
  runId: string,
  turns: Readonly<Record<string, TurnPlan>>,
  tools: ProposalTool[] = proposalTools(h.engine, h.binding(runId)),
) {
  const { script, views } = plannedScript(turns);
  const model = new ScriptedChatModel(script).bindTools(tools);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const last = state.messages.at(-1);
      return last && isAIMessage(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
    })
    .addConditionalEdges('tools', (state) => (proposalMade(state.messages) ? END : 'agent'))
    .compile();
  return { graph, views };
}

const pay = (invoice_id: string, extra: Record<string, unknown> = {}) => ({
  name: 'propose_invoice_pay',
  arguments: { invoice_id, ...extra },
});
const credit = (amount_minor: number) => ({
  name: 'propose_credit_issue',
  arguments: { customer_id: 'cus-81', amount_minor, currency: 'USD' },
});
const toolMessages = (messages: readonly BaseMessage[]) =>
  messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));

describe('countersign/langgraph', () => {
  it('proposes without interrupt(); an operator approves; the executor runs once; the next turn gets the handback as messages', async () => {
    const turn1 = graphFor('run-1', { 'Pay invoice inv-104': { calls: [pay('inv-104')] } });
    const state = await turn1.graph.invoke({ messages: [new HumanMessage('Pay invoice inv-104')] });
    const [proposal] = await h.proposals();
    expect(proposal?.status).toBe('pending');
    const [reply] = toolMessages(state.messages);
    expect(reply?.status).toBe('success');
    expect(reply?.artifact).toEqual({
      countersign: 'proposed',
      proposalId: proposal?.id,
      short: proposal?.short,
      operation: 'invoice.pay',
    });
    expect(reply?.content).toContain(
      `Proposal ${proposal?.id} (short hash ${proposal?.short}) created: "Pay Northwind Paper Co. 240.49 USD".`,
    );
    expect(turn1.views).toHaveLength(1);
    expect(h.executions()).toBe(0);

    expect((await h.approve(proposal!.id, proposal!.digest)).kind).toBe('completed');
    expect(h.executions()).toBe(1);

    const { script, views } = plannedScript({
      'Did the payment go through?': { calls: [], answer: 'It did.' },
    });
    const agent = createReactAgent({
      llm: new ScriptedChatModel(script),
      tools: proposalTools(h.engine, h.binding('run-2')),
    });
    const context = await handbackMessages(h.engine, { tenant: 'acme', runId: 'run-1' });
    const next = await agent.invoke({
      messages: [...context, new HumanMessage('Did the payment go through?')],
    });
    expect(next.messages.at(-1)?.content).toBe('It did.');
    expect(views[0]?.system).toContain(
      `invoice.pay ${proposal?.id} (${proposal?.short}): succeeded. Approved by a human; the application executed it. The invoice was paid (payment pay_1).`,
    );
    expect(h.executions()).toBe(1);
  });

  it("answers an extra key with the operation's invalid_request message (status error) and nothing is stored or executed", async () => {
    const turn = graphFor('run-1', {
      'Pay invoice inv-104': {
        calls: [pay('inv-104', { destination_account_id: 'acct-evil-1' })],
        answer: 'I could not.',
      },
    });
    const state = await turn.graph.invoke({ messages: [new HumanMessage('Pay invoice inv-104')] });
    const [reply] = toolMessages(state.messages);
    expect(reply?.status).toBe('error');
    expect(reply?.content).toBe(
      'The request was not accepted: $.destination_account_id: unknown field. Correct these fields and try again.',
    );
    expect(reply?.artifact).toEqual({
      countersign: 'invalid_request',
      reason: 'invalid_request',
      operation: 'invoice.pay',
    });
    expect(state.messages.at(-1)?.content).toBe('I could not.');
    expect(await h.proposals()).toHaveLength(0);
    expect(h.executions()).toBe(0);
  });

  it('lets the model correct itself within the same run through createReactAgent', async () => {
    const { script } = plannedScript({
      'Pay invoice inv-104': {
        calls: [pay('inv-104', { amount_minor: 1 }), pay('inv-104')],
        answer: 'Proposed.',
      },
    });
    const agent = createReactAgent({
      llm: new ScriptedChatModel(script),
      tools: proposalTools(h.engine, h.binding('run-1')),
    });
    const state = await agent.invoke({ messages: [new HumanMessage('Pay invoice inv-104')] });
    expect(toolMessages(state.messages).map((m) => m.status)).toEqual(['error', 'success']);
    expect(await h.proposals()).toHaveLength(1);
    expect(h.executions()).toBe(0);
  });

  it('refuses an old approval for a changed amount (stale_view) and a tampered record (corrupt_approval_record)', async () => {
    await graphFor('run-1', { 'Credit 40.00': { calls: [credit(4_000)] } }).graph.invoke({
      messages: [new HumanMessage('Credit 40.00')],
    });
    const [first] = await h.proposals();
    expect((await h.approve(first!.id, first!.digest)).kind).toBe('completed');
    await graphFor('run-2', { 'Make it 400.00': { calls: [credit(40_000)] } }).graph.invoke({
      messages: [new HumanMessage('Make it 400.00')],
    });
    const changed = (await h.proposals()).find((p) => p.id !== first!.id)!;
    expect(await h.approve(changed.id, first!.digest)).toMatchObject({
      kind: 'not_approvable',
      reason: 'stale_view',
    });
    h.tamper(changed.id, '{"amount_minor":4000,"currency":"USD","customer_id":"cus-81"}');
    expect(await h.approve(changed.id, changed.digest)).toMatchObject({
      kind: 'not_approvable',
      reason: 'corrupt_approval_record',
    });
    expect(h.credits).toEqual([{ customer_id: 'cus-81', amount_minor: 4_000, currency: 'USD' }]);
  });

  it('compiles once and reads the binding from each invocation’s configurable', async () => {
    const { script } = plannedScript({
      'Pay invoice inv-104': { calls: [pay('inv-104')] },
      'Pay invoice inv-105': { calls: [pay('inv-105')] },
    });
    const tools = proposalTools(h.engine, (config) => h.binding(config.configurable?.['run_id']));
    const agent = createReactAgent({ llm: new ScriptedChatModel(script), tools });
    await agent.invoke(
      { messages: [new HumanMessage('Pay invoice inv-104')] },
      { configurable: { run_id: 'run-a' } },
    );
    await agent.invoke(
      { messages: [new HumanMessage('Pay invoice inv-105')] },
      { configurable: { run_id: 'run-b' } },
    );
    expect((await h.proposals()).map((p) => p.runId).sort()).toEqual(['run-a', 'run-b']);
  });

  it('under a standing grant the reply says it was executed and how it ended, and the turn ends at it', async () => {
    await h.grantPayment('inv-104');
    const turn = graphFor('run-grant', { 'Pay invoice inv-104': { calls: [pay('inv-104')] } });
    const state = await turn.graph.invoke({ messages: [new HumanMessage('Pay invoice inv-104')] });
    const [proposal] = await h.proposals();
    expect(proposal?.status).toBe('succeeded');
    const [reply] = toolMessages(state.messages);
    expect(reply?.content).toBe(
      `Proposal ${proposal?.id} (short hash ${proposal?.short}) created: "Pay Northwind Paper Co. 240.49 USD". Status: approved by a standing grant; it was executed and succeeded. Do not propose it again.`,
    );
    expect(turn.views).toHaveLength(1);
    expect(h.executions()).toBe(1);

    await h.grantPayment('inv-107');
    h.world.provider.failWhen(() => true, 'decline');
    const failed = await graphFor('run-grant-2', {
      'Pay invoice inv-107': { calls: [pay('inv-107')] },
    }).graph.invoke({
      messages: [new HumanMessage('Pay invoice inv-107')],
    });
    const declined = (await h.proposals()).find((p) => p.id !== proposal?.id);
    expect(declined?.status).toBe('terminal_failure');
    expect(toolMessages(failed.messages)[0]?.content).toContain(
      'Status: approved by a standing grant; it failed and will not be retried.',
    );
  });

  it('a refusal (resource_mismatch) is an error reply with its reason, and the model is asked again', async () => {
    const turn = graphFor(
      'run-1',
      { 'Pay invoice inv-104': { calls: [pay('inv-104')], answer: 'I may only pay inv-105.' } },
      proposalTools(h.engine, { ...h.binding('run-1'), resource: 'invoice:inv-105' }),
    );
    const state = await turn.graph.invoke({ messages: [new HumanMessage('Pay invoice inv-104')] });
    const [reply] = toolMessages(state.messages);
    expect(reply?.status).toBe('error');
    expect(reply?.artifact).toEqual({
      countersign: 'invalid_request',
      reason: 'resource_mismatch',
      operation: 'invoice.pay',
    });
    expect(state.messages.at(-1)?.content).toBe('I may only pay inv-105.');
    expect(await h.proposals()).toHaveLength(0);
  });

  it('a binding error reaches the application: proposalMade throws it, the hook sees it, the model gets no retry prompt', async () => {
    const seen: BindingError[] = [];
    const tools = proposalTools(h.engine, (config) => h.binding(config.configurable?.['run_id']), {
      onBindingError: (error) => seen.push(error),
    });
    for (const configurable of [{}, { run_id: 'undefined' }, { run_id: '   ' }]) {
      const turn = graphFor('unused', { 'Pay invoice inv-104': { calls: [pay('inv-104')] } }, tools);
      const failure = await turn.graph
        .invoke({ messages: [new HumanMessage('Pay invoice inv-104')] }, { configurable })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(BindingError);
      expect(failure).toMatchObject({
        field: 'runId',
        reason: 'run_id' in configurable && configurable.run_id === 'undefined' ? 'placeholder' : 'missing',
      });
      expect(turn.views).toHaveLength(1);
    }
    expect(seen.map((e) => e.reason)).toEqual(['missing', 'placeholder', 'missing']);
    // Called directly by the application (no tool call), the tool throws it.
    await expect(tools[0]!.invoke({ invoice_id: 'inv-104' }, { configurable: {} })).rejects.toBeInstanceOf(
      BindingError,
    );
    seen.length = 0;

    // In a prebuilt agent without proposalMade, the model reads a reply that asks it for nothing.
    const { script, views } = plannedScript({
      'Pay invoice inv-104': { calls: [pay('inv-104')], answer: 'It could not be submitted.' },
    });
    const agent = createReactAgent({ llm: new ScriptedChatModel(script), tools });
    await agent.invoke({ messages: [new HumanMessage('Pay invoice inv-104')] });
    expect(views[1]?.toolResults[0]).toBe(
      'The application could not submit this proposal because of its own configuration; nothing was proposed. This is not a problem with your request: do not retry; tell the user it could not be submitted.',
    );
    expect(views[1]?.toolResults[0]).not.toContain('fix');
    expect(seen).toHaveLength(1);
    expect(await h.proposals()).toHaveLength(0);
  });

  it('an operator edit can never change which operation (tool) a proposal is for', async () => {
    await graphFor('run-1', { 'Pay invoice inv-104': { calls: [pay('inv-104')] } }).graph.invoke({
      messages: [new HumanMessage('Pay invoice inv-104')],
    });
    const [proposal] = await h.proposals();
    const edited = await h.engine.proposals.edit({
      tenant: 'acme',
      proposalId: proposal!.id,
      editor: { id: 'user:ada@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] },
      changes: { operation: 'credit.issue', tool: 'propose_credit_issue' },
    });
    expect(edited).toMatchObject({ kind: 'invalid_request', reason: 'invalid_request' });
    expect(edited.kind === 'invalid_request' ? edited.issues.map((i) => i.path) : []).toEqual([
      '$.changes.operation',
      '$.changes.tool',
    ]);
    expect((await h.engine.proposals.get('acme', proposal!.id))?.status).toBe('pending');
    expect(h.executions()).toBe(0);
  });

  it('shows the model the operation request schema and keeps the tool name fixed by the operation kind', () => {
    expect(() => proposalTools(h.engine, { ...h.binding('run-1'), runId: 'null' })).toThrow(
      expect.objectContaining({ name: 'BindingError', field: 'runId', reason: 'placeholder' }),
    );
    const [tool] = proposalTools(h.engine, h.binding('run-1'), { operations: ['invoice.pay'] });
    expect(tool?.name).toBe('propose_invoice_pay');
    expect(tool?.schema).toMatchObject({
      type: 'object',
      properties: { invoice_id: { type: 'string' } },
      additionalProperties: false,
    });
  });
});

describe('countersign/langgraph over a proposal quota', () => {
  it('rate_limited is an error reply with its artifact; proposalMade routes back to the model', async () => {
    const q = await adapterHarness({ limits: { perAgent: { pending: 1 }, perTenant: false } });
    try {
      const tools = proposalTools(q.engine, q.binding('run-q'));
      const { script, views } = plannedScript({
        'Pay invoice inv-104': { calls: [pay('inv-104')] },
        'Pay invoice inv-107': { calls: [pay('inv-107')], answer: 'I will wait.' },
      });
      const model = new ScriptedChatModel(script).bindTools(tools);
      const graph = new StateGraph(MessagesAnnotation)
        .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
        .addNode('tools', new ToolNode(tools))
        .addEdge(START, 'agent')
        .addConditionalEdges('agent', (state) => {
          const last = state.messages.at(-1);
          return last && isAIMessage(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
        })
        .addConditionalEdges('tools', (state) => (proposalMade(state.messages) ? END : 'agent'))
        .compile();
      await graph.invoke({ messages: [new HumanMessage('Pay invoice inv-104')] });
      const state = await graph.invoke({ messages: [new HumanMessage('Pay invoice inv-107')] });
      const [reply] = toolMessages(state.messages);
      expect(reply?.status).toBe('error');
      expect(reply?.artifact).toMatchObject({ countersign: 'rate_limited', reason: 'rate_limited' });
      expect(String(reply?.content)).toContain('Nothing was proposed.');
      expect(state.messages.at(-1)?.content).toBe('I will wait.');
      expect(views).toHaveLength(3);
      expect(await q.proposals()).toHaveLength(1);
    } finally {
      await q.close();
    }
  });
});

describe('countersign/langgraph when a database writer blocked the tenant’s audit chain', () => {
  it('corrupt_audit_chain is an error reply with its artifact; proposalMade routes back to the model; nothing is stored', async () => {
    const first = await graphFor('run-c', {
      'Pay invoice inv-104': { calls: [pay('inv-104')] },
    }).graph.invoke({
      messages: [new HumanMessage('Pay invoice inv-104')],
    });
    expect(proposalMade(first.messages)).toBe(true);
    forgeNextAuditEvent(h.store, 'acme');
    const { graph, views } = graphFor('run-c', {
      'Pay invoice inv-107': { calls: [pay('inv-107')], answer: 'It is on hold.' },
    });
    const state = await graph.invoke({ messages: [new HumanMessage('Pay invoice inv-107')] });
    const [reply] = toolMessages(state.messages);
    expect(reply?.status).toBe('error');
    expect(reply?.artifact).toEqual({
      countersign: 'corrupt_audit_chain',
      reason: 'corrupt_audit_chain',
      operation: 'invoice.pay',
    });
    expect(String(reply?.content)).toContain('Nothing was recorded or executed');
    expect(String(reply?.content)).not.toMatch(/^Proposal /);
    expect(proposalMade(state.messages)).toBe(false);
    expect(state.messages.at(-1)?.content).toBe('It is on hold.');
    expect(views).toHaveLength(2);
    expect((await h.proposals()).map((p) => (p.request as { invoice_id: string }).invoice_id)).toEqual([
      'inv-104',
    ]);
  });
});
