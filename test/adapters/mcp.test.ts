import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld, type DemoWorld } from '../../examples/index.js';
import { attachMcp, type McpHttpHandler } from '../../src/adapters/mcp/index.js';
import { requestJsonSchema } from '../../src/adapters/shared/request-json-schema.js';
import { createEngine, type Engine } from '../../src/index.js';
import { createCountersignApp } from '../../src/server/create-app.js';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { type RunningServer, startServer } from '../../src/server/start-server.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { approver, tempDir } from '../support/engine.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface World {
  readonly engine: Engine;
  readonly world: DemoWorld;
  readonly directory: PrincipalDirectory;
  readonly db: string;
  readonly tokens: { readonly acme: string; readonly globex: string; readonly operator: string };
  close(): Promise<void>;
}

/** A SQLite file with tenants acme and globex, one agent token each, and an engine on the demo operations. */
async function world(): Promise<World> {
  const { dir, cleanup } = tempDir();
  const db = join(dir, 'countersign.db');
  const store = new SqliteStore({ path: db });
  const w = demoWorld({ journal: join(dir, 'countersign-demo-provider.jsonl') });
  const engine = await createEngine({ store, operations: demoOperations(w) });
  const directory = new PrincipalDirectory(store);
  await directory.migrate();
  await directory.ensureTenant('acme');
  await directory.ensureTenant('globex');
  await directory.addOperator({
    tenant: 'acme',
    email: 'ada@acme.test',
    password: 'correct horse battery staple',
    roles: ['approver'],
  });
  const tokens = {
    acme: await directory.issueAgentToken({ tenant: 'acme' }),
    globex: await directory.issueAgentToken({ tenant: 'globex' }),
    operator: await directory.issueOperatorToken({ email: 'ada@acme.test' }),
  };
  return {
    engine,
    world: w,
    directory,
    db,
    tokens,
    close: async () => {
      await engine.close();
      cleanup();
    },
  };
}

const textOf = (result: unknown): string => {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
};

function cli(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: ROOT },
      (error, _stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr });
      },
    );
  });
}

describe('countersign mcp (stdio, through the official MCP client)', () => {
  let w: World;
  let client: Client;
  let stderr = '';
  beforeAll(async () => {
    w = await world();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'mcp',
        '--db',
        w.db,
        '--demo',
        '--tenant',
        'acme',
        '--agent-token',
        w.tokens.acme,
      ],
      cwd: ROOT,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    client = new Client({ name: 'countersign-test', version: '1.0.0' });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await w?.close();
  });

  it('lists one propose_<kind> tool per operation with the request JSON Schema, and get_proposal', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'propose_invoice_pay',
      'propose_order_refund_missing_discount',
      'propose_email_broadcast_apply_draft',
      'get_proposal',
    ]);
    const pay = w.engine.operations.get('invoice.pay')!;
    expect(tools[0]?.inputSchema).toEqual(requestJsonSchema(pay));
  });

  it('proposes as the token’s agent; an operator approves through the engine; get_proposal returns the outcome and handback', async () => {
    const proposed = await client.callTool({
      name: 'propose_invoice_pay',
      arguments: { invoice_id: 'inv-104' },
    });
    expect(proposed.isError).toBeFalsy();
    const id = (proposed.structuredContent as { proposal_id: string }).proposal_id;
    expect(textOf(proposed)).toContain(`Proposal ${id} (short hash `);
    const proposal = await w.engine.get('acme', id);
    expect(proposal).toMatchObject({
      status: 'pending',
      requestedBy: 'agent:acme-assistant',
      resource: 'invoice:inv-104',
    });
    expect(proposal?.runId).toMatch(/^run_/);
    expect(stderr).toContain(proposal!.runId);

    const done = await w.engine.approveAndExecute({
      tenant: 'acme',
      proposalId: id,
      approver: approver(),
      seenDigest: proposal!.digest,
    });
    expect(done.kind).toBe('completed');
    expect(w.world.provider.calls).toBe(1);

    const read = await client.callTool({ name: 'get_proposal', arguments: { proposal_id: id } });
    expect(read.structuredContent).toMatchObject({
      proposal_id: id,
      status: 'succeeded',
      short_hash: proposal!.short,
      outcome: { kind: 'succeeded', result: { payment_id: 'pay_1' } },
      handback: 'The invoice was paid (payment pay_1).',
    });
    expect(w.world.provider.calls).toBe(1);
  });

  it('answers an extra key with invalid_request naming the field, as a tool error, and stores nothing', async () => {
    const before = (await w.engine.list('acme')).items.length;
    const refused = await client.callTool({
      name: 'propose_invoice_pay',
      arguments: { invoice_id: 'inv-105', amount_minor: 1 },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      'The request was not accepted: $.amount_minor: unknown field. Correct these fields and try again.',
    );
    expect((await w.engine.list('acme')).items).toHaveLength(before);
  });

  it('refuses to start with a token that is not valid, or that belongs to another tenant', async () => {
    const bad = await cli([
      'mcp',
      '--db',
      w.db,
      '--demo',
      '--tenant',
      'acme',
      '--agent-token',
      'cs_agent_not-a-real-token',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('the agent token is not valid');
    const other = await cli([
      'mcp',
      '--db',
      w.db,
      '--demo',
      '--tenant',
      'acme',
      '--agent-token',
      w.tokens.globex,
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('does not belong to tenant acme');
  });
});

describe('MCP over streamable HTTP (attachMcp on the countersign app, on 127.0.0.1)', () => {
  let w: World;
  let server: RunningServer;
  let mcp: McpHttpHandler | undefined;
  const clients: Client[] = [];
  beforeAll(async () => {
    w = await world();
    const app = createCountersignApp({
      engine: w.engine,
      directory: w.directory,
      mcp: (host, ctx) => {
        mcp = attachMcp(host, ctx.engine, {
          authenticate: (token) => ctx.directory.authenticateBearer(token),
        });
      },
    });
    server = await startServer(app, { port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await mcp?.close();
    await server?.close();
    await w?.close();
  });

  async function connect(
    token: string,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'countersign-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  it('proposes, is approved through the engine, and reads the outcome; the session is the token’s agent of one tenant', async () => {
    const { client } = await connect(w.tokens.acme);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('propose_invoice_pay');
    const proposed = await client.callTool({
      name: 'propose_invoice_pay',
      arguments: { invoice_id: 'inv-104' },
    });
    const id = (proposed.structuredContent as { proposal_id: string }).proposal_id;
    const proposal = await w.engine.get('acme', id);
    expect(proposal).toMatchObject({
      tenant: 'acme',
      requestedBy: 'agent:acme-assistant',
      status: 'pending',
    });
    await w.engine.approveAndExecute({
      tenant: 'acme',
      proposalId: id,
      approver: approver(),
      seenDigest: proposal!.digest,
    });
    const read = await client.callTool({ name: 'get_proposal', arguments: { proposal_id: id } });
    expect(read.structuredContent).toMatchObject({
      status: 'succeeded',
      handback: 'The invoice was paid (payment pay_1).',
    });
    expect(w.world.provider.calls).toBe(1);

    const globex = await connect(w.tokens.globex);
    const foreign = await globex.client.callTool({ name: 'get_proposal', arguments: { proposal_id: id } });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toBe(`No proposal ${id}.`);
    const missing = await client.callTool({
      name: 'get_proposal',
      arguments: { proposal_id: 'prp_doesnotexist' },
    });
    expect(textOf(missing)).toBe('No proposal prp_doesnotexist.');
  });

  it('refuses requests without an agent token (401), operator tokens (403), and another agent’s use of a session (404)', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(init),
      });
    const anonymous = await post({});
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ reason: 'unauthenticated' });
    const operator = await post({ authorization: `Bearer ${w.tokens.operator}` });
    expect(operator.status).toBe(403);
    expect(await operator.json()).toMatchObject({ reason: 'forbidden' });

    const { transport } = await connect(w.tokens.acme);
    const sessionId = transport.sessionId!;
    expect(sessionId).toBeTruthy();
    const hijack = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${w.tokens.globex}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(hijack.status).toBe(404);
  });
});
