/**
 * countersign with the Vercel AI SDK (ai 5, 6 or 7): `tool()` definitions whose execute proposes;
 * the loop stops at the proposal; the next turn gets the handback as messages.
 *
 *   npx tsx examples/ai-sdk/main.ts            # scripted model, no network
 *   OPENAI_API_KEY=… npx tsx examples/ai-sdk/main.ts   # a real model (needs: npm install @ai-sdk/openai)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, type LanguageModel, stepCountIs } from 'ai';
import { handbackMessages, proposalTools, stopAtProposal } from '../../src/adapters/ai-sdk/index.js';
import { randomUUID } from 'node:crypto';
import { createEngine } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { type ScriptView, scriptedLanguageModel } from './scripted-language-model.js';

const dir = mkdtempSync(join(tmpdir(), 'countersign-ai-sdk-'));
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

async function languageModel(): Promise<LanguageModel> {
  if (!process.env['OPENAI_API_KEY']) return scriptedLanguageModel(script);
  const specifier = '@ai-sdk/openai';
  try {
    const { openai } = (await import(specifier)) as { openai: (model: string) => LanguageModel };
    return openai(process.env['OPENAI_MODEL'] ?? 'gpt-4.1-mini');
  } catch {
    throw new Error(
      'A real model needs @ai-sdk/openai: npm install @ai-sdk/openai (or unset OPENAI_API_KEY for the scripted model)',
    );
  }
}

const model = await languageModel();
const system =
  'You help the payables team of Acme. To pay an invoice, propose it with the tool; a human approves it and the application executes it.';

// Turn 1: tools bound to this run; the loop stops once a proposal exists.
const runId = `run_${randomUUID()}`;
const binding = { tenant: 'acme', resource: 'invoice:*', agent: 'agent:acme-assistant' };
const first = await generateText({
  model,
  system,
  tools: proposalTools(engine, { ...binding, runId }),
  stopWhen: [stepCountIs(5), stopAtProposal],
  prompt: 'Please pay invoice inv-104.',
});
console.log(`turn 1 (${runId}): ${first.toolResults.map((r) => String(r.output)).join(' ')}`);

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

// Turn 2: the handback as a system message (ai 6 and 7, and ai 5 from 5.0.184, ask for allowSystemInMessages).
const second = await generateText({
  model,
  system,
  tools: proposalTools(engine, { ...binding, runId: `run_${randomUUID()}` }),
  allowSystemInMessages: true,
  messages: [
    ...(await handbackMessages(engine, { tenant: 'acme', runId })),
    { role: 'user', content: 'Did the payment go through?' },
  ],
});
console.log(`turn 2: ${second.text}`);
console.log(`payments made by the provider: ${world.provider.calls}`);

await engine.close();
rmSync(dir, { recursive: true, force: true });
