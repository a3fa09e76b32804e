/**
 * countersign with LangGraph.js: the tools propose instead of calling interrupt(); the graph ends
 * at the proposal, needs no checkpointer for the approval, and the next turn gets the handback as
 * a system message.
 *
 *   npx tsx examples/langgraph/main.ts            # scripted chat model, no network
 *   OPENAI_API_KEY=… npx tsx examples/langgraph/main.ts   # a real model (needs: npm install @langchain/openai)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage, isAIMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { randomUUID } from 'node:crypto';
import {
  BindingError,
  handbackMessages,
  proposalMade,
  proposalTools,
} from '../../src/adapters/langgraph/index.js';
import { createEngine } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { type ScriptView, ScriptedChatModel } from './scripted-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'countersign-langgraph-'));
const world = demoWorld();
const engine = await createEngine({
  store: new SqliteStore({ path: join(dir, 'example.db') }),
  operations: demoOperations(world),
});

function script(view: ScriptView) {
  const invoice = /\binv-\d+\b/.exec(view.input)?.[0];
  if (invoice && view.toolResults.length === 0)
    return { toolCall: { name: 'propose_invoice_pay', arguments: { invoice_id: invoice } } };
  const line = view.system.split('\n').find((l) => l.startsWith('- invoice.pay'));
  return { text: line ? `Here is what happened: ${line.slice(2)}` : 'I have nothing to report yet.' };
}

async function chatModel(): Promise<BaseChatModel> {
  if (!process.env['OPENAI_API_KEY']) return new ScriptedChatModel(script);
  const specifier = '@langchain/openai';
  try {
    const { ChatOpenAI } = (await import(specifier)) as {
      ChatOpenAI: new (fields: { model: string }) => BaseChatModel;
    };
    return new ChatOpenAI({ model: process.env['OPENAI_MODEL'] ?? 'gpt-4.1-mini' });
  } catch {
    throw new Error(
      'A real model needs @langchain/openai: npm install @langchain/openai (or unset OPENAI_API_KEY for the scripted model)',
    );
  }
}

// Built and compiled once: the tools read the run id from each invocation's `configurable`.
// Never String(…) it: a missing run_id must stay missing and fail, not become the run "undefined".
const tools = proposalTools(
  engine,
  (config) => ({
    tenant: 'acme',
    resource: 'invoice:*',
    runId: config.configurable?.['run_id'],
    agent: 'agent:acme-assistant',
  }),
  // The application's mistake reaches the application (log it, alert); the model is not asked to retry.
  { onBindingError: (error) => console.log(`application: binding error (${error.field} ${error.reason})`) },
);
const model = await chatModel();
if (!model.bindTools) throw new Error('this chat model cannot call tools');
const llm = model.bindTools(tools);
const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state) => ({ messages: [await llm.invoke(state.messages)] }))
  .addNode('tools', new ToolNode(tools))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', (state) => {
    const last = state.messages.at(-1);
    return last && isAIMessage(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
  })
  // A new proposal ends the turn; a refused request goes back to the model to correct itself.
  .addConditionalEdges('tools', (state) => (proposalMade(state.messages) ? END : 'agent'))
  .compile();

// Forgetting the run id is the application's bug: proposalMade ends the invocation with it.
const forgot = await graph.invoke({ messages: [new HumanMessage('Please pay invoice inv-104.')] }).then(
  () => 'no error',
  (error: unknown) => (error instanceof BindingError ? `${error.name} ${error.field}` : String(error)),
);
console.log(`turn 0 (no run_id): rejected with ${forgot}`);

// Turn 1: the graph proposes and ends after one model call. No interrupt, no thread to resume.
const runId = `run_${randomUUID()}`;
const first = await graph.invoke(
  { messages: [new HumanMessage('Please pay invoice inv-104.')] },
  { configurable: { run_id: runId } },
);
console.log(`turn 1 (${runId}): ${String(first.messages.at(-1)?.content)}`);
console.log(
  `turn 1 ended at the proposal after ${first.messages.filter((m) => m.getType() === 'ai').length} model call(s)`,
);

// A human approves exactly the digest the console showed; the application executes.
const [pending] = (await engine.proposals.list('acme', { runId, status: 'pending' })).items;
if (!pending) throw new Error('the agent did not propose anything');
const decision = await engine.proposals.approveAndExecute({
  tenant: 'acme',
  proposalId: pending.id,
  approver: { id: 'user:ada@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] },
  seenDigest: pending.digest,
});
console.log(
  `operator: approved ${pending.id} (${pending.short}) → ${decision.kind === 'completed' ? decision.outcome.kind : decision.kind}`,
);

// Turn 2: the handback as a system message, instead of Command({ resume }).
const context = await handbackMessages(engine, { tenant: 'acme', runId });
const second = await graph.invoke(
  { messages: [...context, new HumanMessage('Did the payment go through?')] },
  { configurable: { run_id: `run_${randomUUID()}` } },
);
console.log(`turn 2: ${String(second.messages.at(-1)?.content)}`);
console.log(`payments made by the provider: ${world.provider.calls}`);

await engine.close();
rmSync(dir, { recursive: true, force: true });
