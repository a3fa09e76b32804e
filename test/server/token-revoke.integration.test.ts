import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoCredentials } from '../../src/demo/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../support/engine.js';
import { serve } from '../support/serve.js';
import { cli } from '../support/cli.js';

// Issue 10, hole 14: there was no command to revoke an agent or operator token. `countersign
// token revoke` revokes one by id, by principal or from stdin; the running server then answers
// it 401 `unauthenticated` over real HTTP, and the revocation is in the tenant's audit chain.

const { dir, cleanup } = tempDir();
const db = join(dir, 'countersign.db');
let url: string;
let credentials: DemoCredentials;
let stop: (() => Promise<number>) | undefined;

async function asBearer(token: string) {
  const response = await fetch(`${url}/api/v1/proposals?status=pending`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  const running = await serve(['--demo', '--db', db, '--port', '0']);
  url = running.url;
  stop = running.stop;
  credentials = JSON.parse(
    readFileSync(join(dir, 'countersign-demo-credentials.json'), 'utf8'),
  ) as DemoCredentials;
  // A whole `serve --demo` start (seeding, production password hashing) on a busy machine.
}, 180_000);
afterAll(async () => {
  // A start that failed has nothing to stop; its own error is the one to read.
  if (stop) expect(await stop()).toBe(0);
  cleanup();
});

describe('countersign token list / revoke', () => {
  it('--help explains both commands', async () => {
    const list = await cli(['token', 'list', '--help']);
    expect(list.code).toBe(0);
    expect(list.out).toContain('Usage: countersign token list (--db FILE | --store LOCATION) [--tenant T]');
    const revoke = await cli(['token', 'revoke', '--help']);
    expect(revoke.code).toBe(0);
    expect(revoke.out).toContain(
      'Usage: countersign token revoke (--db FILE | --store LOCATION) <token-id | principal | ->',
    );
    expect((await cli(['--help'])).out).toMatch(/token revoke\s+revoke an agent's or operator's API token/);
  });

  it('lists tokens by id and principal, never a secret', async () => {
    const r = await cli(['token', 'list', '--db', db, '--tenant', 'acme']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^tok_[0-9a-f]{16} +agent +acme +agent:acme-assistant +"demo agent" .* live$/m);
    expect(r.out).toMatch(/^tok_[0-9a-f]{16} +operator +acme +\S+@\S+ +"demo api" .* live$/m);
    expect(r.out).not.toMatch(/cs_(agent|op)_/);
    expect(r.out).not.toContain('globex');
  });

  it('revoking an agent by principal: its token is refused 401 unauthenticated, the other tenant’s is not', async () => {
    const acme = credentials.tenants['acme']!;
    const globex = credentials.tenants['globex']!;
    expect((await asBearer(acme.agentToken)).status).toBe(200);
    const r = await cli(['token', 'revoke', '--db', db, 'agent:acme-assistant']);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(
      /^revoked tok_[0-9a-f]{16} \(agent agent:acme-assistant, tenant acme, "demo agent"\)\n$/,
    );
    const refused = await asBearer(acme.agentToken);
    expect(refused.status).toBe(401);
    expect(refused.body['reason']).toBe('unauthenticated');
    expect((await asBearer(globex.agentToken)).status).toBe(200);

    const again = await cli(['token', 'revoke', '--db', db, 'agent:acme-assistant']);
    expect(again.code).toBe(1);
    expect(again.err).toBe('no live token matches agent:acme-assistant\n');
  });

  it('revoking an operator token by the id `token list` prints', async () => {
    const acme = credentials.tenants['acme']!;
    expect((await asBearer(acme.operatorToken)).status).toBe(200);
    const list = await cli(['token', 'list', '--db', db, '--tenant', 'acme']);
    // The first approver's token (the demo also issues one to its second approver).
    const id = /^(tok_[0-9a-f]{16}) {2}operator .* "demo api" {2}issued .* live$/m.exec(list.out)?.[1];
    expect(id).toBeDefined();
    const r = await cli(['token', 'revoke', '--db', db, id!]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`revoked ${id} (operator `);
    const refused = await asBearer(acme.operatorToken);
    expect(refused.status).toBe(401);
    expect(refused.body['reason']).toBe('unauthenticated');
    const twice = await cli(['token', 'revoke', '--db', db, id!]);
    expect(twice.code).toBe(1);
    expect(twice.err).toContain('was already revoked at');
    expect((await cli(['token', 'list', '--db', db, '--tenant', 'acme'])).out).toMatch(
      new RegExp(`^${id} .* revoked \\d{4}-`, 'm'),
    );
  });

  it('revoking the token itself read from stdin; a secret in argv is refused (exit 2)', async () => {
    const globex = credentials.tenants['globex']!;
    const inArgv = await cli(['token', 'revoke', '--db', db, globex.agentToken]);
    expect(inArgv.code).toBe(2);
    expect(inArgv.err).not.toContain(globex.agentToken);
    expect((await asBearer(globex.agentToken)).status).toBe(200);
    const r = await cli(['token', 'revoke', '--db', db, '-'], `${globex.agentToken}\n`);
    expect(r.code).toBe(0);
    expect(r.out).toContain('(agent agent:globex-assistant, tenant globex');
    expect(r.out).not.toContain(globex.agentToken);
    expect((await asBearer(globex.agentToken)).status).toBe(401);
  });

  it('each revocation is in its tenant’s audit chain, and the chains still verify', async () => {
    const store = new SqliteStore({ path: db });
    const rows = store.database
      .prepare(
        "SELECT tenant, proposal_id, actor, detail_json FROM countersign_audit_events WHERE step = 'revoked'",
      )
      .all() as { tenant: string; proposal_id: string; actor: string; detail_json: string }[];
    await store.close();
    expect(rows.map((r) => [r.tenant, r.actor, JSON.parse(r.detail_json).token]).sort()).toEqual([
      ['acme', 'system:cli', 'agent'],
      ['acme', 'system:cli', 'operator'],
      ['globex', 'system:cli', 'agent'],
    ]);
    for (const row of rows) expect(row.proposal_id).toMatch(/^tok_[0-9a-f]{16}$/);
    const verify = await cli(['audit', 'verify', '--db', db]);
    expect(verify.code, verify.err).toBe(0);
  });

  it('revokes nothing while an event a database writer inserted holds the place the tenant’s chain takes next (corrupt_audit_chain, exit 1)', async () => {
    const globex = credentials.tenants['globex']!;
    const forge = (statement: string) => {
      const store = new SqliteStore({ path: db });
      try {
        store.database.prepare(statement).run();
      } finally {
        void store.close();
      }
    };
    forge(`INSERT INTO countersign_audit_events SELECT e.tenant, e.seq + 1, 'evt_forged_token', e.proposal_id, e.attempt_id, e.run_id, e.step, e.actor, e.reason, e.digests_json, e.command_id, e.detail_json, e.at, e.leaf_hash, e.chain_hash, e.seal
      FROM countersign_audit_events e JOIN countersign_audit_heads h ON h.tenant = e.tenant AND h.seq = e.seq WHERE e.tenant = 'globex'`);
    const list = await cli(['token', 'list', '--db', db, '--tenant', 'globex']);
    const id = /^(tok_[0-9a-f]{16}) {2}operator .* "demo api" {2}issued .* live$/m.exec(list.out)?.[1];
    const r = await cli(['token', 'revoke', '--db', db, id!]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('nothing was revoked: the audit chain of tenant globex holds an event');
    expect(r.err).toContain('corrupt_audit_chain');
    expect((await asBearer(globex.operatorToken)).status).toBe(200);
    expect((await cli(['audit', 'verify', '--db', db])).code).toBe(1);
    forge("DELETE FROM countersign_audit_events WHERE id = 'evt_forged_token'");
    expect((await cli(['audit', 'verify', '--db', db])).code).toBe(0);
  });

  it('an argument that names nothing is a usage problem (exit 2)', async () => {
    const r = await cli(['token', 'revoke', '--db', db, 'assistant']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('expected a token id (tok_…), a principal');
  });
});
