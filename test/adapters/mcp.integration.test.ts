import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld, type DemoWorld } from '../../src/demo/demo-world.js';
import { attachMcp, type McpHttpHandler, type RouteHost } from '../../src/adapters/mcp/index.js';
import { requestJsonSchema } from '../../src/adapters/shared/request-json-schema.js';
import { createEngine, type Engine } from '../../src/index.js';
import { createCountersignApp } from '../../src/server/create-app.js';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { type RunningServer, startServer } from '../../src/server/start-server.js';
import { openStore } from '../../src/store/open-store.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { chunkedFlood, counted, lyingBody } from '../support/body-flood.js';
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

  it('lists one propose_<kind> tool per operation with the request JSON Schema, get_proposal and the demo read tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'propose_invoice_pay',
      'propose_order_refund_missing_discount',
      'propose_email_broadcast_apply_draft',
      'get_proposal',
      'list_open_invoices',
    ]);
    expect(tools.find((t) => t.name === 'list_open_invoices')?.annotations?.readOnlyHint).toBe(true);
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
    const proposal = await w.engine.proposals.get('acme', id);
    expect(proposal).toMatchObject({
      status: 'pending',
      requestedBy: 'agent:acme-assistant',
      resource: 'invoice:inv-104',
    });
    expect(proposal?.runId).toMatch(/^run_/);
    expect(stderr).toContain(proposal!.runId);

    const done = await w.engine.proposals.approveAndExecute({
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
      handback: 'Approved by a human; the application executed it. The invoice was paid (payment pay_1).',
    });
    expect(w.world.provider.calls).toBe(1);
  });

  it('answers an extra key with invalid_request naming the field, as a tool error, and stores nothing', async () => {
    const before = (await w.engine.proposals.list('acme')).items.length;
    const refused = await client.callTool({
      name: 'propose_invoice_pay',
      arguments: { invoice_id: 'inv-105', amount_minor: 1 },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      'The request was not accepted: $.amount_minor: unknown field. Correct these fields and try again.',
    );
    expect((await w.engine.proposals.list('acme')).items).toHaveLength(before);
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
    const placeholder = await cli([
      'mcp',
      '--db',
      w.db,
      '--demo',
      '--tenant',
      'acme',
      '--agent-token',
      w.tokens.acme,
      '--run-id',
      'undefined',
    ]);
    expect(placeholder.code).toBe(2);
    expect(placeholder.stderr).toContain('agent binding: runId is the text "undefined" or "null"');
  });
});

describe('countersign mcp --store', () => {
  it('serves from a PGlite directory: the token issued there opens a session that lists the demo tools', async () => {
    const { dir, cleanup } = tempDir();
    const location = `pglite:${join(dir, 'pg-data')}`;
    let client: Client | undefined;
    try {
      // PGlite's directory is one process's at a time: seed it here, close it, then start mcp on it.
      const store = await openStore(location);
      await store.migrate();
      const directory = new PrincipalDirectory(store);
      await directory.migrate();
      await directory.ensureTenant('acme');
      const token = await directory.issueAgentToken({ tenant: 'acme' });
      await store.close();
      client = new Client({ name: 'countersign-test', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [
            '--import',
            'tsx',
            'src/cli/main.ts',
            'mcp',
            '--store',
            location,
            '--demo',
            '--tenant',
            'acme',
            '--agent-token',
            token,
          ],
          cwd: ROOT,
          stderr: 'ignore',
        }),
      );
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('propose_invoice_pay');
      expect(names).toContain('get_proposal');
    } finally {
      await client?.close();
      cleanup();
    }
  }, 60_000);

  it('refuses a store scheme it does not know, naming --store and the forms it takes, exit 2', async () => {
    const r = await cli(['mcp', '--store', 'mysql://x', '--demo', '--tenant', 'acme', '--agent-token', 't']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(
      'countersign mcp: --store: "mysql:" is not a store scheme; give postgres://… (or postgresql://…), pglite:DIR, pglite:memory: or a SQLite file path',
    );
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
    const proposal = await w.engine.proposals.get('acme', id);
    expect(proposal).toMatchObject({
      tenant: 'acme',
      requestedBy: 'agent:acme-assistant',
      status: 'pending',
    });
    await w.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: id,
      approver: approver(),
      seenDigest: proposal!.digest,
    });
    const read = await client.callTool({ name: 'get_proposal', arguments: { proposal_id: id } });
    expect(read.structuredContent).toMatchObject({
      status: 'succeeded',
      handback: 'Approved by a human; the application executed it. The invoice was paid (payment pay_1).',
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

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('MCP over streamable HTTP: session caps, streamed body limit, read scope', () => {
  const LIMIT = 64 * 1024;
  let w: World;
  let server: RunningServer;
  let mcp: McpHttpHandler | undefined;
  let second: string;
  const pulled = { bytes: 0 };
  beforeAll(async () => {
    w = await world();
    second = await w.directory.issueAgentToken({ tenant: 'acme', agent: 'second' });
    const app = createCountersignApp({
      engine: w.engine,
      directory: w.directory,
      mcp: (host, ctx) => {
        // Counts what the handler pulls from each request body.
        const counting: RouteHost = {
          all: (path, handler) =>
            host.all(path, (c) => handler({ req: { raw: counted(c.req.raw, pulled) } })),
        };
        mcp = attachMcp(counting, ctx.engine, {
          authenticate: (token) => ctx.directory.authenticateBearer(token),
          maxSessionsPerAgent: 2,
          maxSessionsPerTenant: 3,
          maxSessions: 4,
          maxBodyBytes: LIMIT,
        });
      },
    });
    server = await startServer(app, { port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await w?.close();
  });

  const open = (token: string) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify(INIT),
    });
  const closeSession = async (token: string, sessionId: string) => {
    const r = await fetch(`${server.url}/mcp`, {
      method: 'DELETE',
      headers: {
        authorization: `Bearer ${token}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
    });
    await r.body?.cancel();
    expect(r.status).toBe(200);
  };
  async function opened(token: string): Promise<string> {
    const r = await open(token);
    await r.body?.cancel();
    expect(r.status).toBe(200);
    return r.headers.get('mcp-session-id')!;
  }
  async function refused(token: string): Promise<{ status: number; retryAfter: number; body: unknown }> {
    const r = await open(token);
    const body =
      r.headers.get('content-type') === 'application/problem+json' ? await r.json() : await r.text();
    return { status: r.status, retryAfter: Number(r.headers.get('retry-after')), body };
  }

  it('caps sessions per agent and per tenant (429 rate_limited, Retry-After); another tenant still opens one; the server cap is the backstop', async () => {
    const a1 = await opened(w.tokens.acme);
    await opened(w.tokens.acme);
    const agentFull = await refused(w.tokens.acme);
    expect(agentFull.status).toBe(429);
    expect(agentFull.body).toMatchObject({ reason: 'rate_limited', scope: 'agent' });
    expect(agentFull.retryAfter).toBeGreaterThanOrEqual(1);
    expect(agentFull.retryAfter).toBeLessThanOrEqual(3600);

    const b1 = await opened(second);
    const tenantFull = await refused(second);
    expect(tenantFull.status).toBe(429);
    expect(tenantFull.body).toMatchObject({ reason: 'rate_limited', scope: 'tenant' });
    expect(tenantFull.retryAfter).toBeGreaterThanOrEqual(1);

    // acme's agents are at their caps; globex's agent is not refused for it.
    const g1 = await opened(w.tokens.globex);
    expect(mcp?.sessions).toBe(4);
    const serverFull = await refused(w.tokens.globex);
    expect(serverFull.status).toBe(503);
    expect(serverFull.body).toMatchObject({ reason: 'rate_limited', scope: 'server' });

    // A closed session gives its slot back.
    await closeSession(w.tokens.acme, a1);
    await closeSession(second, b1);
    await closeSession(w.tokens.globex, g1);
    expect(mcp?.sessions).toBe(1);
    await opened(w.tokens.acme);
    await opened(second);
  });

  it('stops reading a chunked body at the limit and answers 413 body_too_large while the client is still sending', async () => {
    pulled.bytes = 0;
    const max = 32 * 1024 * 1024;
    const flood = await chunkedFlood(`${server.url}/mcp`, {
      headers: {
        authorization: `Bearer ${w.tokens.globex}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      max,
      prefix: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"',
      suffix: '"}}',
    });
    // The server pulled at most the limit and one chunk, and answered long before the body ended.
    expect(pulled.bytes).toBeGreaterThan(LIMIT);
    expect(pulled.bytes).toBeLessThanOrEqual(LIMIT + 64 * 1024);
    expect(flood.finished).toBe(false);
    expect(flood.sentAtResponse).toBeLessThan(max / 4);
    expect(flood.status).toBe(413);
    expect(flood.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(flood.body)).toEqual({
      type: 'urn:countersign:problem:body_too_large',
      title: 'Body too large',
      status: 413,
      detail: `the request body is larger than ${LIMIT} bytes`,
      reason: 'body_too_large',
      message: `the request body is larger than ${LIMIT} bytes`,
      maxBytes: LIMIT,
    });
    // The unread rest is not drained: the connection closes.
    expect(flood.headers.connection).toBe('close');
  });

  it('holds a body whose Content-Length lies to the limit, reading no further', async () => {
    const lying = lyingBody(8 * 1024 * 1024);
    const r = await mcp!.handle(
      new Request(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${w.tokens.globex}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': '10',
        },
        body: lying.stream,
        duplex: 'half',
      } as RequestInit),
    );
    expect(lying.produced()).toBeLessThanOrEqual(LIMIT + 4096);
    expect(r.status).toBe(413);
    expect(await r.json()).toMatchObject({ reason: 'body_too_large' });
  });

  it('scopes reads like the HTTP API: another agent’s proposal of the same tenant reads like a missing id, and no list or cursor names it', async () => {
    const connect = async (token: string) => {
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      const client = new Client({ name: 'countersign-test', version: '1.0.0' });
      await client.connect(transport);
      return client;
    };
    const propose = async (client: Client, invoice: string) => {
      w.world.invoices.add({
        tenant: 'acme',
        id: invoice,
        supplierName: 'Northwind Paper Co.',
        supplierAccount: 'acct-supplier-7',
        dueMinor: 1_000,
        currency: 'USD',
        status: 'open',
      });
      const r = await client.callTool({ name: 'propose_invoice_pay', arguments: { invoice_id: invoice } });
      expect(r.isError).toBeFalsy();
      return (r.structuredContent as { proposal_id: string }).proposal_id;
    };
    await mcp!.close();
    const a = await connect(w.tokens.acme);
    const b = await connect(second);
    try {
      const b1 = await propose(b, 'inv-scope-1');
      const b2 = await propose(b, 'inv-scope-2');
      const mine = await propose(a, 'inv-scope-3');
      expect((await w.engine.proposals.get('acme', mine))?.requestedBy).toBe('agent:acme-assistant');

      const foreign = await b.callTool({ name: 'get_proposal', arguments: { proposal_id: mine } });
      const missing = await b.callTool({
        name: 'get_proposal',
        arguments: { proposal_id: 'prp_doesnotexist' },
      });
      expect(foreign.isError).toBe(true);
      expect(foreign.structuredContent).toBeUndefined();
      expect(textOf(foreign)).toBe(`No proposal ${mine}.`);
      expect(textOf(missing)).toBe('No proposal prp_doesnotexist.');
      const own = await a.callTool({ name: 'get_proposal', arguments: { proposal_id: mine } });
      expect(own.structuredContent).toMatchObject({ proposal_id: mine, status: 'pending' });

      // The HTTP API answers the same read 404, and B's pages and cursors hold only B's proposals.
      const api = (path: string) =>
        fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${second}` } });
      const direct = await api(`/proposals/${mine}`);
      expect(direct.status).toBe(404);
      expect(await direct.json()).toMatchObject({ reason: 'not_found' });
      const seen: string[] = [];
      const cursors: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await api(`/proposals?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        const body = (await page.json()) as { items: { id: string }[]; nextCursor?: string };
        seen.push(...body.items.map((p) => p.id));
        cursor = body.nextCursor;
        if (cursor) cursors.push(Buffer.from(cursor, 'base64url').toString('utf8'));
      } while (cursor);
      for (const c of cursors) expect(c).not.toContain(mine);
      expect(seen).toEqual([b2, b1]);
      expect(cursors).toHaveLength(1);
      expect(cursors[0]).toContain(b2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
