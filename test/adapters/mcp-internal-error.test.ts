import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpServer } from '../../src/adapters/mcp/index.js';
import { createEngine, defineOperation } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';

// A tool call that fails inside the server (a bug, a store down) answers the model with a
// correlation id only: the error's own text (SQL, table names, paths) goes to the operator's log.

const broken = defineOperation({
  kind: 'test.broken',
  scopeVersion: 1,
  effect: 'local',
  scope: z.strictObject({ tenant: z.string(), operation: z.literal('test.broken'), n: z.number() }),
  request: z.strictObject({ n: z.number() }),
  arguments: z.strictObject({ n: z.number() }),
  resource: () => 'broken:1',
  async prepare() {
    throw new Error(
      'SQLITE_IOERR: disk I/O error reading /var/lib/secret/countersign.db table countersign_grants',
    );
  },
  async execute() {
    return {};
  },
});

describe('a tool call that fails inside the MCP server', () => {
  it('answers a tool error with a correlation id, logs the error under it, and keeps the session', async () => {
    const logged: { fields: Record<string, unknown>; message: string }[] = [];
    const logger = {
      debug: () => {},
      info: () => {},
      warn: () => {},
      error: (fields: Record<string, unknown>, message: string) => {
        logged.push({ fields, message });
      },
    };
    const engine = await createEngine({ store: new SqliteStore({ path: ':memory:' }), operations: [broken] });
    const server = createMcpServer(
      engine,
      { tenant: 'acme', agent: 'agent:acme-assistant', runId: 'run-1' },
      { logger },
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const result = await client.callTool({ name: 'propose_test_broken', arguments: { n: 1 } });
      const text = (result.content as { text: string }[]).map((c) => c.text).join('');
      expect(result.isError).toBe(true);
      expect(text).toMatch(
        /^The call failed inside the server \(correlation id cor_[0-9a-z]+\)\. Do not assume anything was proposed or executed: check with get_proposal or ask an operator before trying again\.$/,
      );
      expect(text).not.toMatch(/SQLITE|secret|countersign_/);
      expect(logged).toHaveLength(1);
      expect(logged[0]?.message).toBe('mcp tool call failed');
      expect(text).toContain(String(logged[0]?.fields['correlationId']));
      expect(logged[0]?.fields).toMatchObject({
        tool: 'propose_test_broken',
        tenant: 'acme',
        agent: 'agent:acme-assistant',
      });
      expect(String(logged[0]?.fields['err'])).toContain('SQLITE_IOERR');
      // The session still answers.
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toContain('get_proposal');
    } finally {
      await client.close();
      await engine.close();
    }
  });
});
