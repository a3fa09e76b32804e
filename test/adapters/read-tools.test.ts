import { type BaseMessage, HumanMessage, isAIMessage, ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Agent, Runner } from '@openai/agents';
import { generateText, stepCountIs } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scriptedLanguageModel } from '../../examples/ai-sdk/scripted-language-model.js';
import { demoReadTools, demoWorld, type OpenInvoiceRow } from '../../src/demo/demo-world.js';
import { ScriptedChatModel } from '../../examples/langgraph/scripted-chat-model.js';
import { ScriptedModel, ScriptedModelProvider } from '../../examples/openai-agents/scripted-model.js';
import * as aiSdk from '../../src/adapters/ai-sdk/index.js';
import * as langgraph from '../../src/adapters/langgraph/index.js';
import * as openaiAgents from '../../src/adapters/openai-agents/index.js';
import type { AgentBinding } from '../../src/adapters/shared/agent-binding.js';
import { type AuditEvent, ConfigurationError } from '../../src/index.js';
import { type Harness, harness } from '../support/engine.js';
import { FORGED_EVENT_ID, forgeNextAuditEvent } from '../support/forge-audit.js';
import { plannedScript, type TurnPlan } from './support/planned-script.js';

let h: Harness;
beforeEach(async () => {
  const world = demoWorld();
  h = await harness({ world, readTools: demoReadTools(world) });
});
afterEach(async () => {
  await h.close();
});

const bindingOf = (tenant: string, runId: string): AgentBinding => ({
  tenant,
  runId,
  agent: `agent:${tenant}-assistant`,
});
const LIST = { name: 'list_open_invoices', arguments: {} };
const ASK = 'Which invoices are open?';
const plan = (...calls: TurnPlan['calls']): Readonly<Record<string, TurnPlan>> => ({
  [ASK]: { calls, answer: 'Here they are.' },
});

/** The invoice ids in a tool result the model saw (the JSON text of the rows). */
function idsIn(toolResult: string | undefined): string[] {
  return (JSON.parse(toolResult ?? 'null') as OpenInvoiceRow[]).map((r) => r.invoice_id);
}
const ownIds = (tenant: string) => h.world.invoices.open(tenant).map((i) => i.id);
const reads = (tenant: string): Promise<AuditEvent[]> =>
  h.store.read((tx) => tx.listAudit(tenant, { limit: 100, steps: ['read'] }));

describe('read tools through OpenAI Agents (scripted model)', () => {
  function agentFor(turns: Readonly<Record<string, TurnPlan>>) {
    const { script, views } = plannedScript(turns);
    const model = new ScriptedModel(script);
    const runner = new Runner({ modelProvider: new ScriptedModelProvider(model), tracingDisabled: true });
    // Built once: the binding is read from each run's context, which the model never sees.
    const binding = (context: { tenant: string; runId: string }) => bindingOf(context.tenant, context.runId);
    const agent = new Agent<{ tenant: string; runId: string }>({
      name: 'Payables assistant',
      instructions: 'Help with supplier invoices.',
      tools: [...openaiAgents.readTools(h.engine, binding), ...openaiAgents.proposalTools(h.engine, binding)],
      toolUseBehavior: openaiAgents.stopAtProposal,
    });
    return { agent, runner, views, model };
  }

  it('one agent serves two tenants: each run reads only its own tenant’s rows, and the run goes on after the read', async () => {
    const acme = agentFor(plan(LIST));
    const a = await acme.runner.run(acme.agent, ASK, { context: { tenant: 'acme', runId: 'run-a' } });
    expect(a.finalOutput).toBe('Here they are.');
    expect(acme.model.calls).toBe(2);
    expect(acme.views[0]?.tools).toContain('list_open_invoices');
    expect(idsIn(acme.views[1]?.toolResults[0])).toEqual(ownIds('acme'));

    const globex = agentFor(plan(LIST));
    await globex.runner.run(globex.agent, ASK, { context: { tenant: 'globex', runId: 'run-g' } });
    const seen = idsIn(globex.views[1]?.toolResults[0]);
    expect(seen).toEqual(ownIds('globex'));
    expect(seen).toContain('inv-201');
    expect(seen).not.toContain('inv-108');

    expect((await reads('acme')).map((e) => [e.actor, e.runId, e.detail['tool']])).toEqual([
      ['agent:acme-assistant', 'run-a', 'list_open_invoices'],
    ]);
    expect((await reads('globex')).map((e) => [e.actor, e.runId])).toEqual([
      ['agent:globex-assistant', 'run-g'],
    ]);
  });

  it('a tenant the model puts in the input is refused (invalid_request) and nothing is read', async () => {
    const t = agentFor(plan({ name: 'list_open_invoices', arguments: { tenant: 'globex' } }));
    await t.runner.run(t.agent, ASK, { context: { tenant: 'acme', runId: 'run-a' } });
    const output = t.views[1]?.toolResults[0] ?? '';
    expect(output).toContain('The request was not accepted');
    expect(output).toContain('tenant');
    expect(output).not.toContain('inv-');
    expect(await reads('acme')).toEqual([]);
    expect(await reads('globex')).toEqual([]);
  });

  it('a fixed binding missing its agent fails when the tools are built, not mid-run', () => {
    expect(() => openaiAgents.readTools(h.engine, { tenant: 'acme', runId: 'run-1', agent: '' })).toThrow(
      ConfigurationError,
    );
    expect(() =>
      openaiAgents.readTools(h.engine, bindingOf('acme', 'r'), { tools: ['list_everything'] }),
    ).toThrow(/"list_everything" is not registered/);
  });
});

describe('read tools through the AI SDK (scripted model)', () => {
  async function turn(tenant: string, turns: Readonly<Record<string, TurnPlan>>) {
    const { script, views } = plannedScript(turns);
    const binding = bindingOf(tenant, `run-${tenant}`);
    const result = await generateText({
      model: scriptedLanguageModel(script),
      tools: { ...aiSdk.readTools(h.engine, binding), ...aiSdk.proposalTools(h.engine, binding) },
      stopWhen: [stepCountIs(5), aiSdk.stopAtProposal],
      prompt: ASK,
    });
    return { result, views };
  }

  it('reads each tenant’s own rows, and does not stop at a read', async () => {
    const acme = await turn('acme', plan(LIST));
    expect(acme.result.steps).toHaveLength(2);
    expect(acme.result.text).toBe('Here they are.');
    expect(idsIn(acme.views[1]?.toolResults[0])).toEqual(ownIds('acme'));
    const globex = await turn('globex', plan(LIST));
    expect(idsIn(globex.views[1]?.toolResults[0])).toEqual(ownIds('globex'));
    expect(ownIds('acme')).not.toEqual(ownIds('globex'));
    expect((await reads('globex')).map((e) => e.runId)).toEqual(['run-globex']);
  });

  it('refuses an extra field with the engine’s own message, and reads nothing', async () => {
    const t = await turn(
      'acme',
      plan({ name: 'list_open_invoices', arguments: { currency: 'USD', run_id: 'x' } }),
    );
    expect(t.views[1]?.toolResults[0]).toContain('run_id');
    expect(await reads('acme')).toEqual([]);
  });
});

describe('read tools through LangGraph (scripted chat model)', () => {
  function graphFor(turns: Readonly<Record<string, TurnPlan>>) {
    const { script, views } = plannedScript(turns);
    const binding = (config: RunnableConfig) => {
      const c = config.configurable as { tenant: string; run_id: string };
      return bindingOf(c.tenant, c.run_id);
    };
    const tools = [...langgraph.readTools(h.engine, binding), ...langgraph.proposalTools(h.engine, binding)];
    const model = new ScriptedChatModel(script).bindTools(tools);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', new ToolNode(tools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (state) => {
        const last = state.messages.at(-1);
        return last && isAIMessage(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
      })
      .addConditionalEdges('tools', (state) => (langgraph.proposalMade(state.messages) ? END : 'agent'))
      .compile();
    return { graph, views };
  }
  const toolMessages = (messages: readonly BaseMessage[]) =>
    messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));

  it('reads the configurable tenant’s rows with a read artifact; the graph returns to the model', async () => {
    for (const tenant of ['acme', 'globex']) {
      const g = graphFor(plan(LIST));
      const state = await g.graph.invoke(
        { messages: [new HumanMessage(ASK)] },
        { configurable: { tenant, run_id: `run-${tenant}` } },
      );
      const [reply] = toolMessages(state.messages);
      expect(reply?.status).toBe('success');
      expect(reply?.artifact).toMatchObject({ countersign: 'read', tool: 'list_open_invoices' });
      expect(idsIn(String(reply?.content))).toEqual(ownIds(tenant));
      expect(g.views).toHaveLength(2);
      const [event] = await reads(tenant);
      expect(event?.proposalId).toBe((reply?.artifact as { readId?: string } | undefined)?.readId);
      expect(event?.proposalId).toMatch(/^read_/);
    }
  });

  it('withholds the rows when a database writer blocked the tenant’s audit chain (corrupt_audit_chain, status error)', async () => {
    const config = { configurable: { tenant: 'acme', run_id: 'run-acme' } };
    await graphFor(plan(LIST)).graph.invoke({ messages: [new HumanMessage(ASK)] }, config);
    forgeNextAuditEvent(h.store, 'acme');
    const g = graphFor(plan(LIST));
    const state = await g.graph.invoke({ messages: [new HumanMessage(ASK)] }, config);
    const [reply] = toolMessages(state.messages);
    expect(reply?.status).toBe('error');
    expect(reply?.artifact).toEqual({
      countersign: 'corrupt_audit_chain',
      reason: 'corrupt_audit_chain',
      tool: 'list_open_invoices',
    });
    expect(String(reply?.content)).toContain('Nothing was recorded or executed');
    for (const id of ownIds('acme')) expect(String(reply?.content)).not.toContain(id);
    expect(state.messages.at(-1)?.content).toBe('Here they are.');
    // The first read's event and the writer's copy of it: the refused read recorded nothing.
    expect((await reads('acme')).map((e) => e.id === FORGED_EVENT_ID)).toEqual([false, true]);
  });

  it('answers input the strict schema refuses with countersign’s refusal (status error)', async () => {
    const g = graphFor(plan({ name: 'list_open_invoices', arguments: { agent: 'agent:globex-assistant' } }));
    const state = await g.graph.invoke(
      { messages: [new HumanMessage(ASK)] },
      { configurable: { tenant: 'acme', run_id: 'run-a' } },
    );
    const [reply] = toolMessages(state.messages);
    expect(reply?.status).toBe('error');
    expect(reply?.artifact).toEqual({
      countersign: 'invalid_request',
      reason: 'invalid_request',
      tool: 'list_open_invoices',
    });
    expect(String(reply?.content)).toContain('agent');
    expect(await reads('acme')).toEqual([]);
  });
});
