/**
 * countersign's MCP server: any MCP client proposes through `propose_<kind>` tools and reads the
 * outcome with `get_proposal`; an operator approves in between. This example starts
 * `countersign mcp` over stdio exactly as Claude Desktop or an IDE would, as the agent of tenant
 * acme whose token it issued.
 *
 *   npx tsx examples/mcp/main.ts            # a scripted MCP client, no network
 *   OPENAI_API_KEY=… npx tsx examples/mcp/main.ts   # an OpenAI Agents SDK agent drives the MCP tools
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Agent, MCPServerStdio, run } from '@openai/agents';
import { createEngine } from '../../src/index.js';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'countersign-mcp-'));
const db = join(dir, 'countersign.db');

// The application side: the engine (as `countersign serve --demo` would run it) and an agent token.
const store = new SqliteStore({ path: db });
const world = demoWorld({ journal: join(dir, 'countersign-demo-provider.jsonl') });
const engine = await createEngine({ store, operations: demoOperations(world) });
const directory = new PrincipalDirectory(store);
await directory.migrate();
await directory.ensureTenant('acme', 'Acme Corp');
const token = await directory.issueAgentToken({ tenant: 'acme' });

// What an MCP client configuration runs: countersign mcp, with the token in the environment.
const command = process.execPath;
const args = [
  '--import',
  'tsx',
  join(root, 'src/cli/main.ts'),
  'mcp',
  '--db',
  db,
  '--demo',
  '--tenant',
  'acme',
];
const env = { ...(process.env as Record<string, string>), COUNTERSIGN_AGENT_TOKEN: token };

let proposalId: string;
if (process.env['OPENAI_API_KEY']) {
  const server = new MCPServerStdio({ name: 'countersign', command, args, env, cwd: root });
  await server.connect();
  try {
    const agent = new Agent({
      name: 'Payables assistant',
      instructions:
        'Help the payables team of Acme. Propose payments with the countersign tools; a human approves them.',
      model: process.env['OPENAI_MODEL'] ?? 'gpt-4.1-mini',
      mcpServers: [server],
    });
    const result = await run(agent, 'Please pay invoice inv-104.');
    console.log(`agent: ${result.finalOutput}`);
  } finally {
    await server.close();
  }
  const [pending] = (await engine.proposals.list('acme', { status: 'pending' })).items;
  if (!pending) throw new Error('the agent did not propose anything');
  proposalId = pending.id;
} else {
  const client = new Client({ name: 'countersign-example', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, env, cwd: root, stderr: 'ignore' }));
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);
  const proposed = await client.callTool({
    name: 'propose_invoice_pay',
    arguments: { invoice_id: 'inv-104' },
  });
  console.log(`propose_invoice_pay: ${JSON.stringify(proposed.content)}`);
  proposalId = (proposed.structuredContent as { proposal_id: string }).proposal_id;
  await client.close();
}

// The operator approves in the console (here: through the engine) exactly the digest it showed.
const shown = await engine.proposals.get('acme', proposalId);
if (!shown) throw new Error(`no proposal ${proposalId}`);
const decision = await engine.proposals.approveAndExecute({
  tenant: 'acme',
  proposalId,
  approver: { id: 'user:ada@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] },
  seenDigest: shown.digest,
});
console.log(
  `operator: approved ${proposalId} (${shown.short}) → ${decision.kind === 'completed' ? decision.outcome.kind : decision.kind}`,
);

// A later session reads the outcome and the application's handback with get_proposal.
const later = new Client({ name: 'countersign-example', version: '1.0.0' });
await later.connect(new StdioClientTransport({ command, args, env, cwd: root, stderr: 'ignore' }));
const read = await later.callTool({ name: 'get_proposal', arguments: { proposal_id: proposalId } });
const view = read.structuredContent as { status: string; handback: string };
console.log(`get_proposal: ${view.status}. ${view.handback}`);
await later.close();

await engine.close();
rmSync(dir, { recursive: true, force: true });
