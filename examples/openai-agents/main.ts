/**
 * countersign with the OpenAI Agents SDK: the agent looks up open invoices with a read tool whose
 * tenant is the application's, proposes, a human approves, the application executes, and the next
 * turn learns the outcome (and a German-speaking operator reads it in German) — no needsApproval,
 * no RunState to keep.
 *
 *   npx tsx examples/openai-agents/main.ts            # scripted model, no network
 *   OPENAI_API_KEY=… npx tsx examples/openai-agents/main.ts   # a real model (OPENAI_MODEL, default gpt-4.1-mini)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, Runner, setTracingDisabled, user } from '@openai/agents';
import {
  handbackMessages,
  proposalTools,
  readTools,
  stopAtProposal,
} from '../../src/adapters/openai-agents/index.js';
import { randomUUID } from 'node:crypto';
import { createEngine, formatHandback } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { demoOperations, demoReadTools, demoWorld } from '../../src/demo/demo-world.js';
import { type ScriptView, ScriptedModel, ScriptedModelProvider } from './scripted-model.js';

const realModel = Boolean(process.env['OPENAI_API_KEY']);
if (!realModel) setTracingDisabled(true);

// The application: its own records, the operations, and an engine on a SQLite file.
const dir = mkdtempSync(join(tmpdir(), 'countersign-openai-agents-'));
const world = demoWorld();
const engine = await createEngine({
  store: new SqliteStore({ path: join(dir, 'example.db') }),
  operations: demoOperations(world),
  readTools: demoReadTools(world),
});

// A scripted model: lists open invoices when asked, asks to pay the invoice the user names, then
// answers from the handback.
function script(view: ScriptView) {
  if (/\bopen\b/i.test(view.input)) {
    if (view.toolResults.length === 0) return { toolCall: { name: 'list_open_invoices', arguments: {} } };
    const rows = JSON.parse(view.toolResults[0] ?? '[]') as { invoice_id: string }[];
    return { text: `Open invoices: ${rows.map((r) => r.invoice_id).join(', ')}` };
  }
  const invoice = /\binv-\d+\b/.exec(view.input)?.[0];
  if (invoice && view.toolResults.length === 0)
    return { toolCall: { name: 'propose_invoice_pay', arguments: { invoice_id: invoice } } };
  const line = view.system.split('\n').find((l) => l.startsWith('- invoice.pay'));
  return { text: line ? `Here is what happened: ${line.slice(2)}` : 'I have nothing to report yet.' };
}
const runner = realModel
  ? new Runner()
  : new Runner({
      modelProvider: new ScriptedModelProvider(new ScriptedModel(script)),
      tracingDisabled: true,
    });

// Built once: the tools read tenant, run id and agent from the run context the application passes.
const binding = (context: { runId: string }) => ({
  tenant: 'acme',
  resource: 'invoice:*',
  runId: context.runId,
  agent: 'agent:acme-assistant',
});
const agent = new Agent<{ runId: string }>({
  name: 'Payables assistant',
  instructions:
    'You help the payables team of Acme. To pay an invoice, propose it with the tool; a human approves it and the application executes it. Never claim a payment happened unless the application reported it.',
  model: realModel ? (process.env['OPENAI_MODEL'] ?? 'gpt-4.1-mini') : 'scripted',
  tools: [...readTools(engine, binding), ...proposalTools(engine, binding)],
  toolUseBehavior: stopAtProposal,
});

// Turn 0: the agent looks up acme's open invoices. The tenant is the binding's, never the model's,
// and the read is audited in acme's chain.
const lookup = await runner.run(agent, 'Which invoices are open?', {
  context: { runId: `run_${randomUUID()}` },
});
console.log(`turn 0: ${lookup.finalOutput}`);

// Turn 1: the agent proposes. The run ends normally; the proposal is the only state to keep.
const runId = `run_${randomUUID()}`;
const first = await runner.run(agent, 'Please pay invoice inv-104.', { context: { runId } });
console.log(`turn 1 (${runId}): ${first.finalOutput}`);

// A human approves exactly what the console showed (the digest of the stored proposal).
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

// Turn 2: a new run; the application hands back what happened.
const context = await handbackMessages(engine, { tenant: 'acme', runId });
const second = await runner.run(agent, [...context, user('Did the payment go through?')], {
  context: { runId: `run_${randomUUID()}` },
});
console.log(`turn 2: ${second.finalOutput}`);
console.log(`payments made by the provider: ${world.provider.calls}`);
// The same outcome for a German-speaking operator: money and dates through Intl, texts from the catalog.
console.log(
  `de: ${formatHandback(await engine.proposals.handback({ tenant: 'acme', runId }, { locale: 'de-DE' }), { locale: 'de-DE' })}`,
);

await engine.close();
rmSync(dir, { recursive: true, force: true });
