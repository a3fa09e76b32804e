/**
 * The peer benchmark: one approved tool call per cycle, through to the model's final answer, with
 * the agent frameworks' own approval flows made durable by hand against countersign's adapters.
 * Run: npm run bench:peers  (--json prints the ratios and WAL figures on the last line)
 *
 * Every cycle: the model asks to pay an invoice, the request is persisted durably to SQLite, a
 * fresh object loads it as a separate request would, a human approves, the payment executes
 * exactly once, the model answers.
 *
 * - OpenAI Agents JS, durable: a tool with `needsApproval`; the interrupted `RunState` serialized
 *   (`state.toString()`) into a SQLite row marked pending; the approval request loads it, claims it
 *   once with `UPDATE … WHERE status = 'pending'`, resumes it with `RunState.fromString()` and
 *   `state.approve()`, runs the tool, and writes a completion row (4 statements, 3 write transactions).
 * - LangGraph.js, durable: `interrupt()` in the tool before it pays, with
 *   `@langchain/langgraph-checkpoint-sqlite`'s `SqliteSaver`, resumed with `new Command({ resume })`.
 * - countersign through the matching adapter: the tool proposes and the turn ends at the proposal
 *   (`stopAtProposal` / `proposalMade`), the approver's page loads the proposal (`engine.get`),
 *   `approveAndExecute` runs the operation's executor, and the next turn gets the handback.
 * - For information: each framework's in-memory approval (the state kept in the process, nothing
 *   stored), and LangGraph's tool run with its checkpointer and no approval.
 * - Each framework again with the tool executed directly and no approval at all: the baseline the
 *   approval overhead is measured from.
 * - Each framework's two turns without approval plus countersign's rows written by hand in the
 *   same four transactions (lifecycle-flows.ts's same-rows floor): the lowest overhead any design
 *   storing those rows could reach, which bounds the ratios from below.
 *
 * Same scripted model (one script, each framework's model interface), same payment work and
 * provider stub, same SQLite settings as countersign's store (WAL, synchronous=NORMAL, 1 KiB pages, a
 * checkpoint every 4 MiB of WAL), one process. Rounds
 * are interleaved, each round in a rotated order (so each flow runs in turn before and after each
 * other); each flow's median round is reported, and overheads and ratios are medians of per-round
 * differences and ratios. CPU time is `process.cpuUsage()` (user + system).
 * Bytes stored are the bytes of every column of every row a flow wrote for the cycle. WAL appended
 * is measured from outside: before each sampled cycle its databases' WAL is checkpointed and
 * truncated, after it the -wal files' frames are counted (page headers included, the file header not).
 *
 * CYCLES (per flow per round, default 300) and ROUNDS (default 5) tune the run.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HumanMessage, isAIMessage, SystemMessage } from '@langchain/core/messages';
import { tool as langchainTool, type StructuredToolInterface } from '@langchain/core/tools';
import {
  Command,
  END,
  interrupt,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { Agent, Runner, RunState, setTracingDisabled, tool as openaiTool, user } from '@openai/agents';
import { z } from 'zod';
import { demoOperations, demoWorld } from '../src/demo/demo-world.js';
import { ScriptedChatModel } from '../examples/langgraph/scripted-chat-model.js';
import {
  type ScriptStep,
  type ScriptView,
  ScriptedModel,
  ScriptedModelProvider,
} from '../examples/openai-agents/scripted-model.js';
import {
  handbackMessages as lgHandback,
  proposalMade,
  proposalTools as lgProposalTools,
} from '../src/adapters/langgraph/index.js';
import {
  handbackMessages as oaHandback,
  proposalTools as oaProposalTools,
  stopAtProposal,
} from '../src/adapters/openai-agents/index.js';
import { type Actor, createEngine, type Engine } from '../src/index.js';
import { printJsonResult } from './json-result.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { SQLITE_PAGE_SIZE, SqliteStore } from '../src/store/sqlite/index.js';
import { walAutocheckpointPages } from '../src/store/sqlite/sqlite-driver.js';
import type { SqliteDatabase } from '../src/store/sqlite/index.js';
import { floorFlow, type LifecycleFlow } from './lifecycle-flows.js';

setTracingDisabled(true);

const CYCLES = Number(process.env['CYCLES'] ?? 300);
const ROUNDS = Number(process.env['ROUNDS'] ?? 5);
const WARMUP = Math.min(50, CYCLES);
const dir = mkdtempSync(join(tmpdir(), 'countersign-peers-'));

// ---------------------------------------------------------------------------------------------
// The shared world: invoices, a payment provider, and the one model script every flow uses.

const world = demoWorld();
let invoiceSeq = 0;
/** A fresh open invoice per cycle, so each cycle pays something new exactly once. */
function nextInvoice(): string {
  invoiceSeq += 1;
  const id = `inv-b${invoiceSeq}`;
  world.invoices.add({
    tenant: 'acme',
    id,
    supplierName: 'Northwind Paper Co.',
    supplierAccount: 'acct-supplier-7',
    dueMinor: 24_049,
    currency: 'USD',
    status: 'open',
  });
  return id;
}

/** The payment itself, as a tool without approval would make it. */
async function payDirect(invoiceId: string): Promise<string> {
  const invoice = world.invoices.find('acme', invoiceId);
  if (invoice?.status !== 'open') return `No open invoice ${invoiceId}.`;
  const payment = await world.provider.pay(
    {
      destination_account_id: invoice.supplierAccount,
      amount_minor: invoice.dueMinor,
      currency: invoice.currency,
      reference: invoice.id,
    },
    { idempotencyKey: `direct-${invoice.id}` },
  );
  invoice.status = 'paid';
  return `Paid invoice ${invoice.id}: payment ${payment.paymentId}.`;
}

/** The model: asks to pay the invoice named in the user message, then answers from the tool result or the handback. */
function script(view: ScriptView): ScriptStep {
  const match = /^Pay invoice (\S+)$/.exec(view.input);
  if (match && view.toolResults.length === 0) {
    const name = view.tools.find((t) => t.includes('pay')) ?? 'pay_invoice';
    return { toolCall: { name, arguments: { invoice_id: match[1]! } } };
  }
  if (view.toolResults.length > 0) return { text: `Done. ${view.toolResults.at(-1)!.slice(0, 80)}` };
  return { text: `Here is what happened: ${view.system.split('\n').at(-1) ?? ''}` };
}

const PAY_DESCRIPTION = 'Pay an open supplier invoice by its id.';

// ---------------------------------------------------------------------------------------------
// SQLite: the same settings for every flow, and the byte count of what a flow stored.

type Row = Record<string, unknown>;
interface Db {
  prepare(sql: string): {
    run(...p: unknown[]): unknown;
    get(...p: unknown[]): unknown;
    all(...p: unknown[]): unknown[];
  };
  exec(sql: string): unknown;
  pragma(s: string): unknown;
  close(): unknown;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Db;

// countersign's own settings, its page size included (set before the file has a page).
function tune(db: Db): Db {
  db.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma(`wal_autocheckpoint = ${walAutocheckpointPages(SQLITE_PAGE_SIZE)}`);
  db.pragma('synchronous = NORMAL');
  return db;
}

function bytesOf(rows: readonly unknown[]): number {
  let total = 0;
  for (const row of rows as Row[]) {
    for (const value of Object.values(row)) {
      if (typeof value === 'string') total += Buffer.byteLength(value);
      else if (value instanceof Uint8Array) total += value.byteLength;
      else if (typeof value === 'number' || typeof value === 'bigint') total += 8;
    }
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// The flows. Each returns one cycle (and records bytes stored when asked).

interface Bytes {
  pause: number;
  cycle: number;
}
/** A database a flow writes: its connection (to checkpoint it) and its file (to read its WAL's size). */
interface WalFile {
  readonly db: Db;
  readonly path: string;
}
interface Flow {
  readonly name: string;
  readonly framework: 'OpenAI Agents JS' | 'LangGraph.js' | 'none';
  readonly kind:
    | 'approval'
    | 'in-memory'
    | 'countersign'
    | 'direct'
    | 'context'
    | 'two-turn'
    | 'engine'
    | 'floor'
    | 'checked-floor';
  /** The databases whose WAL the flow appends to (none for a flow that stores nothing). */
  readonly wal: readonly WalFile[];
  cycle(measureBytes: Bytes | undefined): Promise<void>;
}

/** Checkpoints and truncates each database's WAL, so the next writes start it afresh. */
function truncateWal(files: readonly WalFile[]): void {
  for (const file of files) {
    const [result] = file.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    check(result?.busy === 0, `the WAL of ${file.path} truncated`);
  }
}

/** The WAL frames (24-byte frame headers included) appended since {@link truncateWal}. */
function walAppended(files: readonly WalFile[]): number {
  let total = 0;
  for (const file of files) {
    let size = 0;
    try {
      size = statSync(`${file.path}-wal`).size;
    } catch {
      // No WAL file: nothing written.
    }
    if (size > 32) total += size - 32;
  }
  return total;
}

const approver: Actor = { id: 'user:ada@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] };

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`benchmark flow broke: ${message}`);
}

async function openaiFlows(engine: Engine, engineDb: Db, engineWal: WalFile): Promise<Flow[]> {
  const model = new ScriptedModel(script);
  const runner = new Runner({ modelProvider: new ScriptedModelProvider(model), tracingDisabled: true });
  const parameters = z.object({ invoice_id: z.string() });

  const direct = new Agent({
    name: 'Payables',
    instructions: 'Pay supplier invoices.',
    tools: [
      openaiTool({
        name: 'pay_invoice',
        description: PAY_DESCRIPTION,
        parameters,
        execute: ({ invoice_id }) => payDirect(invoice_id),
      }),
    ],
  });

  const approving = new Agent({
    name: 'Payables',
    instructions: 'Pay supplier invoices.',
    tools: [
      openaiTool({
        name: 'pay_invoice',
        description: PAY_DESCRIPTION,
        parameters,
        needsApproval: true,
        execute: ({ invoice_id }) => payDirect(invoice_id),
      }),
    ],
  });
  // The durable approval a user would build: the paused run in a row marked pending, claimed once,
  // and a completion row when the resumed run has executed the tool.
  const statesPath = join(dir, 'openai-runstate.db');
  const states = tune(new Database(statesPath));
  states.exec(
    `CREATE TABLE IF NOT EXISTS approvals (id TEXT PRIMARY KEY, status TEXT NOT NULL, state TEXT NOT NULL,
       created_at INTEGER NOT NULL, decided_by TEXT, decided_at INTEGER);
     CREATE TABLE IF NOT EXISTS completions (id TEXT PRIMARY KEY, output TEXT NOT NULL, completed_at INTEGER NOT NULL)`,
  );
  const saveState = states.prepare(
    "INSERT INTO approvals (id, status, state, created_at) VALUES (?, 'pending', ?, ?)",
  );
  const loadState = states.prepare('SELECT * FROM approvals WHERE id = ?');
  const claimState = states.prepare(
    "UPDATE approvals SET status = 'approved', decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
  );
  const complete = states.prepare('INSERT INTO completions (id, output, completed_at) VALUES (?, ?, ?)');
  const loadCompletion = states.prepare('SELECT * FROM completions WHERE id = ?');
  const statesWal: WalFile[] = [{ db: states, path: statesPath }];

  const stopAtTool = new Agent({
    name: 'Payables',
    instructions: 'Pay supplier invoices.',
    tools: [
      openaiTool({
        name: 'pay_invoice',
        description: PAY_DESCRIPTION,
        parameters,
        execute: ({ invoice_id }) => payDirect(invoice_id),
      }),
    ],
    toolUseBehavior: { stopAtToolNames: ['pay_invoice'] },
  });

  let runSeq = 0;
  const countersignAgent = new Agent<{ runId: string }>({
    name: 'Payables',
    instructions: 'Pay supplier invoices.',
    tools: oaProposalTools(engine, (context: { runId: string }) => ({
      tenant: 'acme',
      resource: 'invoice:*',
      runId: context.runId,
      agent: 'agent:acme-assistant',
    })),
    toolUseBehavior: stopAtProposal,
  });

  return [
    {
      name: 'OpenAI Agents JS, tool runs directly (no approval)',
      framework: 'OpenAI Agents JS',
      kind: 'direct',
      wal: [],
      async cycle() {
        const result = await runner.run(direct, `Pay invoice ${nextInvoice()}`);
        check(String(result.finalOutput).startsWith('Done. Paid invoice'), 'direct OpenAI run');
      },
    },
    {
      name: 'OpenAI Agents JS, no approval, the answer on the next turn (two runs)',
      framework: 'OpenAI Agents JS',
      kind: 'two-turn',
      wal: [],
      async cycle() {
        const first = await runner.run(stopAtTool, `Pay invoice ${nextInvoice()}`);
        check(String(first.finalOutput).startsWith('Paid invoice'), 'two-turn OpenAI first run');
        const next = await runner.run(stopAtTool, [
          { type: 'message', role: 'system', content: String(first.finalOutput) },
          user('Did the payment go through?'),
        ]);
        check(
          String(next.finalOutput).startsWith('Here is what happened: Paid invoice'),
          'two-turn OpenAI second run',
        );
      },
    },
    {
      name: 'OpenAI Agents JS, needsApproval, in memory (for information: nothing stored)',
      framework: 'OpenAI Agents JS',
      kind: 'in-memory',
      wal: [],
      async cycle() {
        const first = await runner.run(approving, `Pay invoice ${nextInvoice()}`);
        check(first.interruptions.length === 1, 'needsApproval interruption');
        first.state.approve(first.interruptions[0]!);
        const second = await runner.run(approving, first.state);
        check(String(second.finalOutput).startsWith('Done. Paid invoice'), 'resumed in-memory OpenAI run');
      },
    },
    {
      name: 'OpenAI Agents JS, durable: needsApproval + RunState in SQLite, claimed once, completion row',
      framework: 'OpenAI Agents JS',
      kind: 'approval',
      wal: statesWal,
      async cycle(bytes) {
        const id = `run-${++runSeq}`;
        const first = await runner.run(approving, `Pay invoice ${nextInvoice()}`);
        check(first.interruptions.length === 1, 'needsApproval interruption');
        saveState.run(id, first.state.toString(), Date.now());
        if (bytes) bytes.pause += bytesOf([loadState.get(id)]);
        // The approval request: the stored run loaded, claimed once, resumed from the stored text.
        const row = loadState.get(id) as { state: string; status: string };
        check(row.status === 'pending', 'stored run pending');
        const claimed = claimState.run(approver.id, Date.now(), id) as { changes: number };
        check(claimed.changes === 1, 'claimed once');
        const state = await RunState.fromString(approving, row.state);
        const [pending] = state.getInterruptions();
        check(pending, 'stored interruption');
        state.approve(pending);
        const second = await runner.run(approving, state);
        check(String(second.finalOutput).startsWith('Done. Paid invoice'), 'resumed OpenAI run');
        complete.run(id, String(second.finalOutput), Date.now());
        if (bytes) bytes.cycle += bytesOf([loadState.get(id), loadCompletion.get(id)]);
      },
    },
    {
      name: 'countersign via countersign/openai-agents',
      framework: 'OpenAI Agents JS',
      kind: 'countersign',
      wal: [engineWal],
      async cycle(bytes) {
        const runId = `run-${++runSeq}`;
        const first = await runner.run(countersignAgent, `Pay invoice ${nextInvoice()}`, {
          context: { runId },
        });
        check(String(first.finalOutput).startsWith('Waiting for approval:'), 'countersign proposal');
        await approveRun(engine, engineDb, proposalIdIn(String(first.finalOutput)), bytes);
        const next = await runner.run(
          countersignAgent,
          [...(await oaHandback(engine, { tenant: 'acme', runId })), user('Did the payment go through?')],
          { context: { runId: `${runId}-next` } },
        );
        check(
          String(next.finalOutput).includes('The invoice was paid'),
          `countersign handback: ${String(next.finalOutput)}`,
        );
      },
    },
  ];
}

/** The human's side of a countersign cycle: load the proposal for the page, approve the digest shown, execute. */
async function approveRun(
  engine: Engine,
  engineDb: Db,
  proposalId: string,
  bytes: Bytes | undefined,
): Promise<void> {
  if (bytes) bytes.pause += proposalBytes(engineDb, proposalId);
  // The approver's page loads the proposal named in the operator link, then approves the digest it showed.
  const shown = await engine.proposals.get('acme', proposalId);
  check(shown?.status === 'pending', 'fresh load');
  const done = await engine.proposals.approveAndExecute({
    tenant: 'acme',
    proposalId,
    approver,
    seenDigest: shown.digest,
  });
  check(done.kind === 'completed' && done.outcome.kind === 'succeeded', 'approved and executed');
  if (bytes) bytes.cycle += proposalBytes(engineDb, proposalId);
}

const PROPOSAL_ID = /\b(prp_[0-9a-z]+)\b/;
function proposalIdIn(text: string): string {
  const id = PROPOSAL_ID.exec(text)?.[1];
  check(id, `a proposal id in "${text.slice(0, 80)}"`);
  return id;
}

function proposalBytes(db: Db, id: string): number {
  return (
    bytesOf(db.prepare('SELECT * FROM countersign_proposals WHERE id = ?').all(id)) +
    bytesOf(db.prepare('SELECT * FROM countersign_attempts WHERE proposal_id = ?').all(id)) +
    bytesOf(db.prepare('SELECT * FROM countersign_audit_events WHERE proposal_id = ?').all(id))
  );
}

function agentGraph(
  model: ScriptedChatModel,
  tools: StructuredToolInterface[],
  afterTools: 'agent' | 'end-at-proposal',
) {
  const bound = model.bindTools(tools);
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const last = state.messages.at(-1);
      return last && isAIMessage(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
    })
    .addConditionalEdges('tools', (state) =>
      afterTools === 'end-at-proposal' && proposalMade(state.messages) ? END : 'agent',
    );
}

function threadBytes(saver: SqliteSaver, threadId: string): number {
  const db = saver.db as unknown as Db;
  return (
    bytesOf(db.prepare('SELECT * FROM checkpoints WHERE thread_id = ?').all(threadId)) +
    bytesOf(db.prepare('SELECT * FROM writes WHERE thread_id = ?').all(threadId))
  );
}

function langgraphSaver(file: string): { saver: SqliteSaver; wal: WalFile } {
  const path = join(dir, file);
  const db = tune(new Database(path));
  const saver = new SqliteSaver(db as unknown as ConstructorParameters<typeof SqliteSaver>[0]);
  return { saver, wal: { db, path } };
}

async function langgraphFlows(engine: Engine, engineDb: Db, engineWal: WalFile): Promise<Flow[]> {
  const schema = z.object({ invoice_id: z.string() });
  const directTool = langchainTool(async ({ invoice_id }: { invoice_id: string }) => payDirect(invoice_id), {
    name: 'pay_invoice',
    description: PAY_DESCRIPTION,
    schema,
  });
  const interruptingTool = langchainTool(
    async ({ invoice_id }: { invoice_id: string }) => {
      const decision = interrupt({ action: 'pay_invoice', invoice_id }) as { approved?: boolean };
      if (decision.approved !== true) return 'A human declined the payment.';
      return payDirect(invoice_id);
    },
    { name: 'pay_invoice', description: PAY_DESCRIPTION, schema },
  );
  const direct = agentGraph(new ScriptedChatModel(script), [directTool], 'agent').compile();
  const context = langgraphSaver('langgraph-direct.db');
  const directWithSaver = agentGraph(new ScriptedChatModel(script), [directTool], 'agent').compile({
    checkpointer: context.saver,
  });
  const { saver, wal: saverWal } = langgraphSaver('langgraph-interrupt.db');
  const interrupting = agentGraph(new ScriptedChatModel(script), [interruptingTool], 'agent').compile({
    checkpointer: saver,
  });
  const interruptingInMemory = agentGraph(new ScriptedChatModel(script), [interruptingTool], 'agent').compile(
    { checkpointer: new MemorySaver() },
  );
  const directEnding = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({
      messages: [await new ScriptedChatModel(script).bindTools([directTool]).invoke(state.messages)],
    }))
    .addNode('tools', new ToolNode([directTool]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const lastMessage = state.messages.at(-1);
      return lastMessage && isAIMessage(lastMessage) && (lastMessage.tool_calls?.length ?? 0) > 0
        ? 'tools'
        : END;
    })
    .addEdge('tools', END)
    .compile();
  const countersignTools = lgProposalTools(engine, (config) => ({
    tenant: 'acme',
    resource: 'invoice:*',
    runId: String(config.configurable?.['run_id'] ?? ''),
    agent: 'agent:acme-assistant',
  }));
  const countersign = agentGraph(
    new ScriptedChatModel(script),
    countersignTools,
    'end-at-proposal',
  ).compile();
  let threadSeq = 0;
  const last = (state: { messages: { content: unknown }[] }) => String(state.messages.at(-1)?.content ?? '');

  return [
    {
      name: 'LangGraph.js, tool runs directly (no approval, no checkpointer)',
      framework: 'LangGraph.js',
      kind: 'direct',
      wal: [],
      async cycle() {
        const state = await direct.invoke({ messages: [new HumanMessage(`Pay invoice ${nextInvoice()}`)] });
        check(last(state).startsWith('Done. Paid invoice'), 'direct LangGraph run');
      },
    },
    {
      name: 'LangGraph.js, no approval, the answer on the next turn (two invocations)',
      framework: 'LangGraph.js',
      kind: 'two-turn',
      wal: [],
      async cycle() {
        const first = await directEnding.invoke({
          messages: [new HumanMessage(`Pay invoice ${nextInvoice()}`)],
        });
        check(last(first).startsWith('Paid invoice'), 'two-turn LangGraph first invocation');
        const next = await directEnding.invoke({
          messages: [new SystemMessage(last(first)), new HumanMessage('Did the payment go through?')],
        });
        check(
          last(next).startsWith('Here is what happened: Paid invoice'),
          'two-turn LangGraph second invocation',
        );
      },
    },
    {
      name: 'LangGraph.js, tool runs directly, SqliteSaver checkpointer',
      framework: 'LangGraph.js',
      kind: 'context',
      wal: [context.wal],
      async cycle() {
        const config = { configurable: { thread_id: `direct-${++threadSeq}` } };
        const state = await directWithSaver.invoke(
          { messages: [new HumanMessage(`Pay invoice ${nextInvoice()}`)] },
          config,
        );
        check(last(state).startsWith('Done. Paid invoice'), 'direct LangGraph run with checkpointer');
      },
    },
    {
      name: 'LangGraph.js, interrupt() + Command({ resume }), MemorySaver (for information: nothing stored)',
      framework: 'LangGraph.js',
      kind: 'in-memory',
      wal: [],
      async cycle() {
        const config = { configurable: { thread_id: `memory-${++threadSeq}` } };
        const paused = await interruptingInMemory.invoke(
          { messages: [new HumanMessage(`Pay invoice ${nextInvoice()}`)] },
          config,
        );
        check('__interrupt__' in paused, 'in-memory interrupt');
        const state = await interruptingInMemory.invoke(new Command({ resume: { approved: true } }), config);
        check(last(state).startsWith('Done. Paid invoice'), 'resumed in-memory LangGraph run');
      },
    },
    {
      name: 'LangGraph.js, durable: interrupt() + Command({ resume }) + SqliteSaver',
      framework: 'LangGraph.js',
      kind: 'approval',
      wal: [saverWal],
      async cycle(bytes) {
        const threadId = `thread-${++threadSeq}`;
        const config = { configurable: { thread_id: threadId } };
        const paused = await interrupting.invoke(
          { messages: [new HumanMessage(`Pay invoice ${nextInvoice()}`)] },
          config,
        );
        check('__interrupt__' in paused, 'interrupt');
        if (bytes) bytes.pause += threadBytes(saver, threadId);
        // The approval request: the graph loads the checkpoint from SQLite and resumes the tool.
        const state = await interrupting.invoke(new Command({ resume: { approved: true } }), config);
        check(last(state).startsWith('Done. Paid invoice'), 'resumed LangGraph run');
        if (bytes) bytes.cycle += threadBytes(saver, threadId);
      },
    },
    {
      name: 'countersign via countersign/langgraph',
      framework: 'LangGraph.js',
      kind: 'countersign',
      wal: [engineWal],
      async cycle(bytes) {
        const runId = `lg-run-${++threadSeq}`;
        const state = await countersign.invoke(
          { messages: [new HumanMessage(`Pay invoice ${nextInvoice()}`)] },
          { configurable: { run_id: runId } },
        );
        check(proposalMade(state.messages), 'countersign proposal');
        await approveRun(engine, engineDb, proposalIdIn(last(state)), bytes);
        const next = await countersign.invoke(
          {
            messages: [
              ...(await lgHandback(engine, { tenant: 'acme', runId })),
              new HumanMessage('Did the payment go through?'),
            ],
          },
          { configurable: { run_id: `${runId}-next` } },
        );
        check(last(next).includes('The invoice was paid'), 'countersign handback');
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Measurement.

interface Sample {
  cpuUs: number;
  wallUs: number;
}

async function measure(flow: Flow, cycles: number): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < cycles; i++) await flow.cycle(undefined);
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3;
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / cycles, wallUs: wallUs / cycles };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const store = new SqliteStore({ path: join(dir, 'countersign.db'), synchronous: 'NORMAL' });
const engine = await createEngine({ store, operations: demoOperations(world), limits: BENCH_LIMITS });
const engineDb = store.database as unknown as Db;
const engineWal: WalFile = { db: engineDb, path: join(dir, 'countersign.db') };
const engineAlone: Flow = {
  name: 'countersign engine alone: propose, load, approve + execute, handback (no framework)',
  framework: 'none',
  kind: 'engine',
  wal: [engineWal],
  async cycle(bytes) {
    const runId = `engine-${invoiceSeq}`;
    const invoice_id = nextInvoice();
    const proposed = await engine.proposals.propose({
      operation: 'invoice.pay',
      request: { invoice_id },
      tenant: 'acme',
      resource: 'invoice:*',
      requestedBy: 'agent:acme-assistant',
      runId,
    });
    check(proposed.kind === 'proposed', 'engine propose');
    await approveRun(engine, engineDb, proposed.proposal.id, bytes);
    const items = await engine.proposals.handback({ tenant: 'acme', runId });
    check(items[0]?.status === 'succeeded', 'engine handback');
  },
};
/**
 * The lowest approval overhead a design storing countersign's rows could reach: the framework's
 * two turns without approval (which pay the invoice), plus the rows of one approved `invoice.pay`
 * written by hand in the same four transactions with their reads (lifecycle-flows.ts's floor). No
 * parsing, digests, checks or chaining: only the writes, so its WAL is countersign's too.
 */
async function rowsFloor(
  framework: Flow['framework'],
  among: readonly Flow[],
  checks = false,
): Promise<Flow> {
  const twoTurn = among.find((f) => f.framework === framework && f.kind === 'two-turn')!;
  const path = join(dir, `floor-${checks ? 'checked-' : ''}${framework.split(' ')[0]!.toLowerCase()}.db`);
  const schema = new SqliteStore({ path, synchronous: 'NORMAL' });
  await schema.migrate();
  await schema.close();
  const db = new Database(path);
  const rows: LifecycleFlow = floorFlow(db as unknown as SqliteDatabase, { pay: false, checks });
  let i = 0;
  return {
    name: checks
      ? `${framework}, no approval, two turns + countersign's rows and the contract's checks by hand (checked floor)`
      : `${framework}, no approval, two turns + countersign's rows written by hand (same-rows floor)`,
    framework,
    kind: checks ? 'checked-floor' : 'floor',
    wal: [{ db, path }],
    async cycle() {
      await twoTurn.cycle(undefined);
      await rows.cycle(i++);
    },
  };
}

// ONLY=text keeps the flows whose name contains it (to profile one flow: ONLY=… node --cpu-prof);
// the ratios need every flow, so they are printed only for a full run.
const only = process.env['ONLY'];
const frameworkFlows = [
  ...(await openaiFlows(engine, engineDb, engineWal)),
  ...(await langgraphFlows(engine, engineDb, engineWal)),
];
const flows = [
  ...frameworkFlows,
  await rowsFloor('OpenAI Agents JS', frameworkFlows),
  await rowsFloor('LangGraph.js', frameworkFlows),
  await rowsFloor('OpenAI Agents JS', frameworkFlows, true),
  await rowsFloor('LangGraph.js', frameworkFlows, true),
  engineAlone,
].filter((flow) => only === undefined || flow.name.includes(only));

const bytes = new Map<string, Bytes>();
const walBytes = new Map<string, number>();
for (const flow of flows) {
  for (let i = 0; i < WARMUP; i++) await flow.cycle(undefined);
  const b: Bytes = { pause: 0, cycle: 0 };
  const samples = 100;
  let wal = 0;
  for (let i = 0; i < samples; i++) {
    truncateWal(flow.wal);
    await flow.cycle(b);
    wal += walAppended(flow.wal);
  }
  bytes.set(flow.name, { pause: b.pause / samples, cycle: b.cycle / samples });
  walBytes.set(flow.name, wal / samples);
}

// Each round in a rotated order, every other round reversed: any two flows run in both orders.
const samples = new Map<string, Sample[]>(flows.map((f) => [f.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  const rotated = flows.map((_, i) => flows[(i + round) % flows.length]!);
  const order = round % 2 === 0 ? rotated : rotated.reverse();
  for (const flow of order) samples.get(flow.name)!.push(await measure(flow, CYCLES));
}

interface Result {
  readonly flow: Flow;
  readonly cpuUs: number;
  readonly perSecond: number;
  readonly overheadUs: number | undefined;
  readonly bytes: Bytes;
  readonly walBytes: number;
}
const results: Result[] = flows.map((flow) => {
  const s = samples.get(flow.name)!;
  const cpuUs = median(s.map((x) => x.cpuUs));
  const wallUs = median(s.map((x) => x.wallUs));
  return {
    flow,
    cpuUs,
    perSecond: 1e6 / wallUs,
    overheadUs: undefined,
    bytes: bytes.get(flow.name)!,
    walBytes: walBytes.get(flow.name)!,
  };
});
if (only !== undefined) {
  for (const r of results) process.stdout.write(`${r.flow.name}: ${Math.round(r.cpuUs)} CPU µs per cycle\n`);
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
const flowOf = (framework: Flow['framework'], kind: Flow['kind']) =>
  flows.find((f) => f.framework === framework && f.kind === kind)!;
const baseline = (framework: Flow['framework'], kind: Flow['kind'] = 'direct') =>
  results.find((r) => r.flow === flowOf(framework, kind))!.cpuUs;
// Per round, as paired differences: every flow ran once in each round, so a slower or faster
// stretch of the machine moves a flow and its baseline together and cancels out of their difference.
const perRound = (flow: Flow) => samples.get(flow.name)!.map((x) => x.cpuUs);
const overheads = (flow: Flow): number[] => {
  const base = perRound(flowOf(flow.framework, 'direct'));
  return perRound(flow).map((cpu, round) => cpu - base[round]!);
};
const withOverhead = results.map((r) =>
  r.flow.kind === 'direct' || r.flow.kind === 'engine' ? r : { ...r, overheadUs: median(overheads(r.flow)) },
);

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const kb = (n: number) => (n === 0 ? '—' : `${fmt(n / 1024, 1)} KB`);
const lines = [
  `| flow | CPU µs per cycle | cycles/s | approval overhead (CPU µs over no-approval) | stored per pause | stored per cycle | WAL appended per cycle |`,
  `| --- | ---: | ---: | ---: | ---: | ---: | ---: |`,
  ...withOverhead.map(
    (r) =>
      `| ${r.flow.name} | ${fmt(r.cpuUs)} | ${fmt(r.perSecond)} | ${r.flow.kind === 'direct' ? 'baseline' : r.overheadUs === undefined ? '—' : fmt(r.overheadUs)} | ${kb(r.bytes.pause)} | ${kb(r.bytes.cycle)} | ${kb(r.walBytes)} |`,
  ),
];
const overheadOf = (framework: Flow['framework'], kind: Flow['kind']) =>
  withOverhead.find((r) => r.flow === flowOf(framework, kind))!.overheadUs!;
/** The median over rounds of one flow's overhead divided by the peer's, both from the same round. */
const roundRatio = (framework: Flow['framework'], kind: Flow['kind']) => {
  const peer = overheads(flowOf(framework, 'approval'));
  return median(overheads(flowOf(framework, kind)).map((ours, round) => ours / peer[round]!));
};
const ratio = (framework: Flow['framework']) => ({
  peer: overheadOf(framework, 'approval'),
  ours: overheadOf(framework, 'countersign'),
  ratio: roundRatio(framework, 'countersign'),
  overTwoTurn: baseline(framework, 'countersign') - baseline(framework, 'two-turn'),
  floor: overheadOf(framework, 'floor'),
  floorRatio: roundRatio(framework, 'floor'),
  checked: overheadOf(framework, 'checked-floor'),
  checkedRatio: roundRatio(framework, 'checked-floor'),
});
const oa = ratio('OpenAI Agents JS');
const lg = ratio('LangGraph.js');
const walOf = (framework: Flow['framework'], kind: Flow['kind']) =>
  results.find((r) => r.flow === flowOf(framework, kind))!.walBytes;
const wal = {
  countersign: walOf('none', 'engine'),
  openai_agents_durable: walOf('OpenAI Agents JS', 'approval'),
  langgraph_durable: walOf('LangGraph.js', 'approval'),
};
const floorWal = walOf('OpenAI Agents JS', 'floor');
const WAL_BOUND = 80 * 1024;
process.stdout.write(
  [
    `peer benchmark: ${CYCLES} cycles × ${ROUNDS} rounds per flow (median round), Node ${process.version}, SQLite WAL + synchronous=NORMAL`,
    '',
    ...lines,
    '',
    `approval overheads are medians of per-round differences; ratios are medians of per-round ratios`,
    `countersign approval overhead vs OpenAI Agents JS, durable: ${fmt(oa.ours)} µs vs ${fmt(oa.peer)} µs: ${fmt(oa.ratio, 2)}× (target ≤ 1.0×: ${oa.ratio <= 1 ? 'met' : 'not met'})`,
    `countersign approval overhead vs LangGraph.js, durable:     ${fmt(lg.ours)} µs vs ${fmt(lg.peer)} µs: ${fmt(lg.ratio, 2)}× (target ≤ 0.5×: ${lg.ratio <= 0.5 ? 'met' : 'not met'})`,
    `the same-rows floor's overhead (two turns + countersign's rows written by hand, nothing checked): ${fmt(oa.floor)} µs, ${fmt(oa.floorRatio, 2)}× the durable OpenAI Agents JS peer's; ${fmt(lg.floor)} µs, ${fmt(lg.floorRatio, 2)}× the durable LangGraph.js peer's`,
    `the checked floor's overhead (the same, plus the contract's own checks: schemas, canonical JSON, digests, the claim's and the command's comparisons, the hash chain): ${fmt(oa.checked)} µs, ${fmt(oa.checkedRatio, 2)}×; ${fmt(lg.checked)} µs, ${fmt(lg.checkedRatio, 2)}×`,
    `WAL appended per approved call: countersign ${kb(wal.countersign)} (target ≤ 80 KB: ${wal.countersign <= WAL_BOUND ? 'met' : 'not met'}; the same-rows floor ${kb(floorWal)}), OpenAI Agents JS durable ${kb(wal.openai_agents_durable)}, LangGraph.js durable ${kb(wal.langgraph_durable)}`,
    `countersign cycle over the same two-turn shape without approval: ${fmt(oa.overTwoTurn)} µs (OpenAI Agents JS), ${fmt(lg.overTwoTurn)} µs (LangGraph.js); the engine alone: ${fmt(baseline('none', 'engine'))} µs`,
    '',
  ].join('\n'),
);

await engine.close();
rmSync(dir, { recursive: true, force: true });
printJsonResult({
  overhead_vs_openai_agents_durable: oa.ratio,
  overhead_vs_langgraph_durable: lg.ratio,
  floor_vs_openai_agents_durable: oa.floorRatio,
  floor_vs_langgraph_durable: lg.floorRatio,
  checked_floor_vs_openai_agents_durable: oa.checkedRatio,
  checked_floor_vs_langgraph_durable: lg.checkedRatio,
  wal_bytes_per_approval: wal,
  floor_wal_bytes_per_approval: floorWal,
});
