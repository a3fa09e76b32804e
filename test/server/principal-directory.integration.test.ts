import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { verifyAudit } from '../../src/ledger/verify-audit.js';
import { PrincipalDirectory } from '../../src/server/index.js';
import { sql } from '../../src/sql/sql.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, type BackendName } from '../support/backends.js';
import { ManualClock, tempDir } from '../support/engine.js';
import { testPostgres } from '../support/postgres.js';
import { TEST_PASSWORD_COST } from './support/server-harness.js';

const postgres = testPostgres();
afterAll(async () => {
  await postgres.cleanup();
});

/** Two stores on ONE database, as two servers would open it. */
interface Backend {
  readonly name: string;
  open(): Promise<{ a: Store; b: Store; close(): Promise<void> }>;
}

const BACKEND_OF: Readonly<Record<BackendName, Backend>> = {
  sqlite: {
    name: 'SQLite file',
    open: async () => {
      const { dir, cleanup } = tempDir();
      const a = new SqliteStore({ path: join(dir, 'shared.db') });
      const b = new SqliteStore({ path: join(dir, 'shared.db') });
      await a.migrate();
      return {
        a,
        b,
        close: async () => {
          await a.close();
          await b.close();
          cleanup();
        },
      };
    },
  },
  postgres: {
    name: `PostgreSQL (${postgres.label})`,
    open: async () => {
      const schema = postgres.newSchema();
      const a = await postgres.store({ schema });
      await a.migrate();
      const b = await postgres.store({ schema });
      return {
        a,
        b,
        close: async () => {
          await a.close();
          await b.close();
        },
      };
    },
  },
};

for (const name of BACKENDS) {
  const backend = BACKEND_OF[name];
  describe(`PrincipalDirectory on ${backend.name}`, () => {
    it('signs in identity-provider operators: provisioned once, roles from every sign-in, no takeover, no password', async () => {
      const stores = await backend.open();
      try {
        const clock = new ManualClock();
        const one = new PrincipalDirectory(stores.a, { passwordCost: TEST_PASSWORD_COST, clock });
        const two = new PrincipalDirectory(stores.b, { passwordCost: TEST_PASSWORD_COST, clock });
        await one.migrate();
        await one.ensureTenant('acme');
        await one.ensureTenant('globex');
        await one.addOperator({
          tenant: 'acme',
          email: 'pw@acme.test',
          password: 'correct horse battery',
          roles: ['admin'],
        });
        const issuer = 'https://idp.example.com';
        const ada = {
          issuer,
          subject: 'sub-ada',
          email: 'Ada@Acme.test',
          tenant: 'acme',
          roles: ['approver'],
        };
        // The same first sign-in twice at once (two servers on PostgreSQL; one SQLite store, as a
        // second connection in this process would block the event loop): one operator, one identity.
        const other = backend.name.startsWith('SQLite') ? one : two;
        const [a, b] = await Promise.all([one.signInWithProvider(ada), other.signInWithProvider(ada)]);
        const kinds = [a.kind, b.kind].sort();
        expect(kinds[1]).toBe('signed_in');
        expect(['email_taken', 'signed_in']).toContain(kinds[0]);
        expect([a, b].filter((r) => r.kind === 'signed_in' && r.provisioned)).toHaveLength(1);
        expect(await one.operators('acme')).toContainEqual({
          email: 'ada@acme.test',
          tenant: 'acme',
          roles: ['approver'],
        });
        const again = await two.signInWithProvider({ ...ada, email: 'other@acme.test', roles: ['viewer'] });
        expect(again).toMatchObject({
          kind: 'signed_in',
          provisioned: false,
          session: { email: 'ada@acme.test' },
        });
        expect(again.kind === 'signed_in' && again.session.actor.roles).toEqual(['viewer']);
        expect(await one.isProviderOperator('ada@acme.test', issuer)).toBe(true);
        expect(await one.isProviderOperator('pw@acme.test', issuer)).toBe(false);
        // No password signs a provider operator in.
        for (const password of ['', 'oidc'])
          expect((await one.login({ email: 'ada@acme.test', password, client: 'x' })).kind).toBe(
            'invalid_credentials',
          );
        expect(
          await one.signInWithProvider({
            ...ada,
            subject: 'sub-pw',
            email: 'pw@acme.test',
            roles: ['admin'],
          }),
        ).toEqual({ kind: 'email_taken' });
        expect(await one.operators('acme')).toContainEqual({
          email: 'pw@acme.test',
          tenant: 'acme',
          roles: ['admin'],
        });
        expect(
          await one.signInWithProvider({
            ...ada,
            subject: 'sub-x',
            email: 'x@initech.test',
            tenant: 'initech',
          }),
        ).toEqual({
          kind: 'unknown_tenant',
        });
        expect(await one.signInWithProvider({ ...ada, roles: [] })).toEqual({ kind: 'invalid_roles' });
      } finally {
        await stores.close();
      }
    });

    // Issue 24, hole 6: single sign-on provisioned look-alikes of an existing operator's email.
    it('refuses an email that looks like another operator’s (UTS #39 skeleton) or holds an invisible character, at sign-on and addOperator', async () => {
      const stores = await backend.open();
      try {
        const clock = new ManualClock();
        const one = new PrincipalDirectory(stores.a, { passwordCost: TEST_PASSWORD_COST, clock });
        const two = new PrincipalDirectory(stores.b, { passwordCost: TEST_PASSWORD_COST, clock });
        await one.migrate();
        await one.ensureTenant('acme');
        await one.ensureTenant('globex');
        const password = 'correct horse battery';
        await one.addOperator({ tenant: 'acme', email: 'ada@acme.test', password, roles: ['approver'] });
        const sso = (subject: string, email: string, tenant = 'acme') =>
          two.signInWithProvider({ issuer: 'https://idp.test', subject, email, tenant, roles: ['approver'] });
        expect(await sso('zw', 'a\u200Bda@acme.test')).toEqual({ kind: 'email_invisible' });
        expect(await sso('zw-end', 'ada@acme.test\u2060')).toEqual({ kind: 'email_invisible' });
        expect(await sso('cyr', '\u0430da@acme.test')).toEqual({ kind: 'email_confusable' });
        expect(await sso('fw', '\uFF41\uFF44\uFF41@acme.test')).toEqual({ kind: 'email_confusable' });
        expect(await sso('cyr-cap', '\u0410DA@ACME.TEST', 'globex')).toEqual({ kind: 'email_confusable' });
        expect(await sso('same', 'ADA@acme.test')).toEqual({ kind: 'email_taken' });
        expect(await sso('bob', 'bob@acme.test')).toMatchObject({ kind: 'signed_in', provisioned: true });
        // A provider operator's email is protected the same way, against a password operator too.
        expect(await sso('bob2', 'b\u043Eb@acme.test')).toEqual({ kind: 'email_confusable' });
        for (const [email, reason] of [
          ['b\u043Eb@acme.test', 'email_confusable'],
          ['\uFF41da@acme.test', 'email_confusable'],
          ['ad\u00ADa@acme.test', 'email_invisible'],
        ] as const) {
          const added = one.addOperator({ tenant: 'globex', email, password, roles: ['viewer'] });
          await expect(added).rejects.toThrow(ConfigurationError);
          await expect(added).rejects.toThrow(reason);
        }
        expect((await one.operators('acme')).map((o) => o.email)).toEqual(['ada@acme.test', 'bob@acme.test']);
        expect(await one.operators('globex')).toEqual([]);
        expect(
          await one.addOperator({ tenant: 'globex', email: 'ida@acme.test', password, roles: ['viewer'] }),
        ).toEqual({
          kind: 'added',
        });

        // An operator stored before the skeleton column (NULL) is compared all the same.
        await stores.a.transaction((tx) =>
          tx.local.run(
            sql`INSERT INTO countersign_operators (email, tenant, password_hash, roles, created_at, disabled_at) VALUES ('old@acme.test', 'acme', 'x', 'viewer', 0, NULL)`,
          ),
        );
        expect(await sso('old', '\u043Eld@acme.test')).toEqual({ kind: 'email_confusable' });
        // A look-alike pair stored before the column: adding either again (setup code does, at
        // every start) is still `exists`, not an error.
        await stores.a.transaction((tx) =>
          tx.local.run(
            sql`INSERT INTO countersign_operators (email, tenant, password_hash, roles, created_at, disabled_at) VALUES ('\u043Eld@acme.test', 'acme', 'x', 'viewer', 0, NULL)`,
          ),
        );
        for (const email of ['old@acme.test', '\u043Eld@acme.test'])
          expect(await one.addOperator({ tenant: 'acme', email, password, roles: ['viewer'] })).toEqual({
            kind: 'exists',
          });

        // Two look-alikes signing on at once (two servers on PostgreSQL): one gets in, never both.
        const other = backend.name.startsWith('SQLite') ? one : two;
        const race = await Promise.all([
          one.signInWithProvider({
            issuer: 'https://idp.test',
            subject: 'r1',
            email: 'eve@acme.test',
            tenant: 'acme',
            roles: ['approver'],
          }),
          other.signInWithProvider({
            issuer: 'https://idp.test',
            subject: 'r2',
            email: '\u0435ve@acme.test',
            tenant: 'acme',
            roles: ['approver'],
          }),
        ]);
        expect(race.map((r) => r.kind).sort()).toEqual(['email_confusable', 'signed_in']);
        expect((await one.operators('acme')).filter((o) => o.email.endsWith('ve@acme.test'))).toHaveLength(1);
      } finally {
        await stores.close();
      }
    });

    it('shares tenants, operators, tokens and sessions between two servers on one database', async () => {
      const stores = await backend.open();
      try {
        const clock = new ManualClock();
        const one = new PrincipalDirectory(stores.a, { passwordCost: TEST_PASSWORD_COST, clock });
        const two = new PrincipalDirectory(stores.b, { passwordCost: TEST_PASSWORD_COST, clock });
        await one.migrate();
        await two.migrate();
        expect(await one.ensureTenant('acme', 'Acme Corp')).toBe(true);
        expect(await two.ensureTenant('acme', 'Acme Corp')).toBe(false);
        expect(
          await one.addOperator({
            tenant: 'acme',
            email: 'Ada@Acme.test',
            password: 'correct horse battery',
            roles: ['approver'],
          }),
        ).toEqual({ kind: 'added' });
        expect(
          await two.addOperator({
            tenant: 'acme',
            email: 'ada@acme.test',
            password: 'another password!',
            roles: ['viewer'],
          }),
        ).toEqual({ kind: 'exists' });
        expect(await two.operators('acme')).toEqual([
          { email: 'ada@acme.test', tenant: 'acme', roles: ['approver'] },
        ]);

        const agentToken = await one.issueAgentToken({ tenant: 'acme' });
        expect(await two.authenticateBearer(agentToken)).toEqual({
          kind: 'agent',
          id: 'agent:acme-assistant',
          tenant: 'acme',
          roles: [],
        });
        const operatorToken = await two.issueOperatorToken({ email: 'ada@acme.test' });
        expect(await one.authenticateBearer(operatorToken)).toEqual({
          kind: 'operator',
          id: 'user:ada@acme.test',
          tenant: 'acme',
          roles: ['approver'],
        });
        expect(await two.revokeToken(agentToken)).toBe(true);
        expect(await one.authenticateBearer(agentToken)).toBeUndefined();
        expect(await one.revokeToken(agentToken)).toBe(false);

        const login = await one.login({
          email: 'ADA@acme.test ',
          password: 'correct horse battery',
          client: '10.0.0.1',
        });
        expect(login.kind).toBe('signed_in');
        if (login.kind !== 'signed_in') return;
        const seen = await two.resolveSession(login.sessionId);
        expect(seen?.actor).toEqual({
          kind: 'operator',
          id: 'user:ada@acme.test',
          tenant: 'acme',
          roles: ['approver'],
        });
        expect(seen?.csrfToken).toBe(login.session.csrfToken);
        clock.advance(30 * 60_000);
        expect(await one.resolveSession(login.sessionId)).toBeUndefined();
      } finally {
        await stores.close();
      }
    });

    it('lists tokens by id without secrets and revokes by id, secret or principal, audited in the tenant chain', async () => {
      const stores = await backend.open();
      try {
        const clock = new ManualClock();
        const one = new PrincipalDirectory(stores.a, { passwordCost: TEST_PASSWORD_COST, clock });
        const two = new PrincipalDirectory(stores.b, { passwordCost: TEST_PASSWORD_COST, clock });
        await one.migrate();
        await one.ensureTenant('acme');
        await one.addOperator({
          tenant: 'acme',
          email: 'ada@acme.test',
          password: 'correct horse battery',
          roles: ['approver'],
        });
        const agentA = await one.issueAgentToken({ tenant: 'acme', label: 'first' });
        const agentB = await one.issueAgentToken({ tenant: 'acme', label: 'second' });
        const operator = await one.issueOperatorToken({ email: 'ada@acme.test' });
        const listed = await two.tokens({ tenant: 'acme' });
        expect(listed.map((t) => [t.kind, t.subject, t.label, t.revokedAt]).sort()).toEqual([
          ['agent', 'agent:acme-assistant', 'first', null],
          ['agent', 'agent:acme-assistant', 'second', null],
          ['operator', 'ada@acme.test', 'api', null],
        ]);
        expect(JSON.stringify(listed)).not.toMatch(/cs_(agent|op)_/);
        for (const t of listed) expect(t.id).toMatch(/^tok_[0-9a-f]{16}$/);

        const operatorId = listed.find((t) => t.kind === 'operator')!.id;
        const byId = await two.revokeTokens({ id: operatorId }, { actor: 'system:test' });
        expect(byId).toMatchObject({
          kind: 'revoked',
          tokens: [{ id: operatorId, subject: 'ada@acme.test' }],
        });
        expect(await one.authenticateBearer(operator)).toBeUndefined();
        expect(await two.revokeTokens({ id: operatorId }, { actor: 'system:test' })).toMatchObject({
          kind: 'already_revoked',
          token: { id: operatorId },
        });
        expect(await two.revokeTokens({ id: 'tok_0000000000000000' }, { actor: 'system:test' })).toEqual({
          kind: 'not_found',
        });

        const bySecret = await two.revokeTokens({ secret: agentA }, { actor: 'system:test' });
        expect(bySecret).toMatchObject({ kind: 'revoked', tokens: [{ label: 'first' }] });
        expect(await one.authenticateBearer(agentA)).toBeUndefined();
        expect(await one.authenticateBearer(agentB)).toMatchObject({ id: 'agent:acme-assistant' });
        const byPrincipal = await one.revokeTokens(
          { principal: 'agent:acme-assistant' },
          { actor: 'system:test' },
        );
        expect(byPrincipal).toMatchObject({ kind: 'revoked', tokens: [{ label: 'second' }] });
        expect(await two.authenticateBearer(agentB)).toBeUndefined();
        expect(
          await one.revokeTokens({ principal: 'agent:acme-assistant' }, { actor: 'system:test' }),
        ).toEqual({
          kind: 'not_found',
        });

        const events = await stores.a.read((tx) => tx.listAudit('acme', { limit: 100 }));
        expect(events.filter((e) => e.step === 'revoked').map((e) => [e.actor, e.detail['label']])).toEqual([
          ['system:test', 'api'],
          ['system:test', 'first'],
          ['system:test', 'second'],
        ]);
      } finally {
        await stores.close();
      }
    });

    it('limits failed logins per account and per client address across servers', async () => {
      const stores = await backend.open();
      try {
        const clock = new ManualClock();
        const limit = { perAccount: 3, perClient: 4, windowMs: 60_000 };
        const one = new PrincipalDirectory(stores.a, {
          passwordCost: TEST_PASSWORD_COST,
          clock,
          loginLimit: limit,
        });
        const two = new PrincipalDirectory(stores.b, {
          passwordCost: TEST_PASSWORD_COST,
          clock,
          loginLimit: limit,
        });
        await one.migrate();
        await one.ensureTenant('acme');
        for (const email of ['a@acme.test', 'b@acme.test'])
          await one.addOperator({
            tenant: 'acme',
            email,
            password: 'a long enough password',
            roles: ['approver'],
          });
        const attempt = (d: PrincipalDirectory, email: string, password: string, client: string) =>
          d.login({ email, password, client });
        expect((await attempt(one, 'a@acme.test', 'wrong', '1.1.1.1')).kind).toBe('invalid_credentials');
        expect((await attempt(two, 'a@acme.test', 'wrong', '2.2.2.2')).kind).toBe('invalid_credentials');
        expect((await attempt(one, 'a@acme.test', 'wrong', '3.3.3.3')).kind).toBe('invalid_credentials');
        expect(await attempt(two, 'a@acme.test', 'a long enough password', '4.4.4.4')).toMatchObject({
          kind: 'rate_limited',
        });
        // Another account from a client that failed too often is limited as well.
        for (const email of ['x@acme.test', 'y@acme.test', 'z@acme.test', 'w@acme.test'])
          await attempt(one, email, 'wrong', '9.9.9.9');
        expect(await attempt(two, 'b@acme.test', 'a long enough password', '9.9.9.9')).toMatchObject({
          kind: 'rate_limited',
        });
        expect((await attempt(two, 'b@acme.test', 'a long enough password', '8.8.8.8')).kind).toBe(
          'signed_in',
        );
        clock.advance(60_000);
        expect((await attempt(one, 'a@acme.test', 'a long enough password', '4.4.4.4')).kind).toBe(
          'signed_in',
        );
      } finally {
        await stores.close();
      }
    });

    it('checks at most the limit of concurrent wrong guesses, and still signs a trusted device in on another server', async () => {
      const stores = await backend.open();
      try {
        const clock = new ManualClock();
        const limit = { perAccount: 3, perClient: 1000, windowMs: 60_000 };
        const one = new PrincipalDirectory(stores.a, {
          passwordCost: TEST_PASSWORD_COST,
          clock,
          loginLimit: limit,
        });
        const two = new PrincipalDirectory(stores.b, {
          passwordCost: TEST_PASSWORD_COST,
          clock,
          loginLimit: limit,
        });
        await one.migrate();
        await one.ensureTenant('acme');
        const email = 'a@acme.test';
        const password = 'a long enough password';
        await one.addOperator({ tenant: 'acme', email, password, roles: ['approver'] });
        const earlier = await one.login({ email, password, client: '7.7.7.7' });
        if (earlier.kind !== 'signed_in') throw new Error(`sign-in failed: ${earlier.kind}`);

        // One directory for the burst: two SQLite connections in ONE process would block each
        // other's event loop; a PostgreSQL store's pool runs the burst on many connections anyway.
        const guesses = await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            one.login({ email, password: `guess ${i}`, client: `10.0.0.${i}` }),
          ),
        );
        expect(guesses.filter((r) => r.kind === 'invalid_credentials')).toHaveLength(3);
        const refused = guesses.filter((r) => r.kind === 'rate_limited');
        expect(refused).toHaveLength(57);
        for (const r of refused) expect(r.retryAfterMs).toBeGreaterThan(0);
        expect((await two.login({ email, password, client: '8.8.8.8' })).kind).toBe('rate_limited');

        // The device id the first server issued is honoured by the second: its own limit applies.
        const back = await two.login({ email, password, client: '8.8.8.8', device: earlier.device.id });
        expect(back.kind).toBe('signed_in');
        // Rotated: the old id is an untrusted browser now.
        expect(
          (await one.login({ email, password, client: '7.7.7.7', device: earlier.device.id })).kind,
        ).toBe('rate_limited');
      } finally {
        await stores.close();
      }
    });

    it('two admins on two servers demoting each other at once: one change holds, the other is refused last_admin', async () => {
      const stores = await backend.open();
      try {
        const clock = new ManualClock();
        const one = new PrincipalDirectory(stores.a, { passwordCost: TEST_PASSWORD_COST, clock });
        // Two SQLite connections in ONE process would block each other's event loop: there the two
        // changes race on one connection; PostgreSQL runs them on two servers' pools.
        const two = backend.name.startsWith('SQLite')
          ? one
          : new PrincipalDirectory(stores.b, { passwordCost: TEST_PASSWORD_COST, clock });
        await one.ensureTenant('acme');
        for (const email of ['ann@acme.test', 'bob@acme.test'])
          await one.addOperator({
            tenant: 'acme',
            email,
            password: 'a long enough password',
            roles: ['admin'],
          });
        const [ann, bob] = await two.operatorAccounts('acme');
        const admin = (email: string) =>
          ({ kind: 'operator', id: `user:${email}`, tenant: 'acme', roles: ['admin'] }) as const;
        for (let round = 0; round < 3; round++) {
          const results = await Promise.all([
            one.updateOperator({
              tenant: 'acme',
              id: bob!.id,
              change: { roles: ['approver'] },
              actor: admin(ann!.email),
            }),
            two.updateOperator({
              tenant: 'acme',
              id: ann!.id,
              change: { active: false },
              actor: admin(bob!.email),
            }),
          ]);
          expect(results.map((r) => (r.kind === 'updated' ? 'updated' : r.reason)).sort()).toEqual([
            'last_admin',
            'updated',
          ]);
          const admins = (await one.operatorAccounts('acme')).filter(
            (o) => o.active && o.roles.includes('admin'),
          );
          expect(admins).toHaveLength(1);
          // Back to two active admins for the next round.
          await one.updateOperator({
            tenant: 'acme',
            id: admins[0]!.id === ann!.id ? bob!.id : ann!.id,
            change: { active: true, roles: ['admin'] },
            actor: admin(admins[0]!.email),
          });
        }
        expect(await one.removeProviderRoles({ issuer: 'https://idp.example', subject: 'nobody' })).toEqual({
          kind: 'unknown_identity',
        });
      } finally {
        await stores.close();
      }
    });

    it("seals operator changes with the engine's key, so audit verify with the key finds the chain intact", async () => {
      const stores = await backend.open();
      try {
        const sealKey = 'k'.repeat(32);
        const sealed = new PrincipalDirectory(stores.a, { passwordCost: TEST_PASSWORD_COST, sealKey });
        await sealed.ensureTenant('acme');
        await sealed.addOperator({
          tenant: 'acme',
          email: 'ann@acme.test',
          password: 'a long enough password',
          roles: ['admin'],
        });
        await sealed.addOperator({
          tenant: 'acme',
          email: 'cy@acme.test',
          password: 'a long enough password',
          roles: ['viewer'],
        });
        const cy = (await sealed.operatorAccounts('acme')).find((o) => o.email === 'cy@acme.test')!;
        const ann = { kind: 'operator', id: 'user:ann@acme.test', tenant: 'acme', roles: ['admin'] } as const;
        const changed = await sealed.updateOperator({
          tenant: 'acme',
          id: cy.id,
          change: { active: false },
          actor: ann,
        });
        expect(changed).toMatchObject({ kind: 'updated', changed: true });
        expect(await verifyAudit(stores.a, { tenant: 'acme', sealKey })).toMatchObject({ kind: 'intact' });
        // A directory without the key writes an event the key did not seal: verify names it.
        const unsealed = new PrincipalDirectory(stores.a, { passwordCost: TEST_PASSWORD_COST });
        await unsealed.updateOperator({ tenant: 'acme', id: cy.id, change: { active: true }, actor: ann });
        expect(await verifyAudit(stores.a, { tenant: 'acme', sealKey })).toMatchObject({
          kind: 'broken',
          problem: 'seal_missing',
        });
      } finally {
        await stores.close();
      }
    });
  });
}

describe('PrincipalDirectory input checks', () => {
  it('refuses short passwords, bad role names, unknown tenants and malformed secrets', async () => {
    const { dir, cleanup } = tempDir();
    const store = new SqliteStore({ path: join(dir, 'd.db') });
    try {
      const d = new PrincipalDirectory(store, { passwordCost: TEST_PASSWORD_COST });
      await d.migrate();
      await d.ensureTenant('acme');
      await expect(
        d.addOperator({ tenant: 'acme', email: 'a@acme.test', password: 'short', roles: ['approver'] }),
      ).rejects.toThrow(ConfigurationError);
      await expect(
        d.addOperator({
          tenant: 'acme',
          email: 'a@acme.test',
          password: 'long enough pass',
          roles: ['Approver!'],
        }),
      ).rejects.toThrow(ConfigurationError);
      await expect(
        d.addOperator({
          tenant: 'nope',
          email: 'a@acme.test',
          password: 'long enough pass',
          roles: ['approver'],
        }),
      ).rejects.toThrow(ConfigurationError);
      await expect(d.issueAgentToken({ tenant: 'nope' })).rejects.toThrow(ConfigurationError);
      await expect(d.ensureTenant('Bad Tenant')).rejects.toThrow(ConfigurationError);
      expect(await d.authenticateBearer("cs_agent_' OR 1=1 --")).toBeUndefined();
      expect(await d.resolveSession('cs_sess_x')).toBeUndefined();
      // A trusted-device id is no bearer token, and a limit of 0 or NaN would lock everyone out.
      expect(await d.authenticateBearer(`cs_dev_${'A'.repeat(43)}`)).toBeUndefined();
      for (const loginLimit of [
        { perAccount: 0, perClient: 50, windowMs: 60_000 },
        { perAccount: 5, perClient: Number.NaN, windowMs: 60_000 },
        { perAccount: 5, perClient: 50, perDevice: -1, windowMs: 60_000 },
      ])
        expect(() => new PrincipalDirectory(store, { loginLimit })).toThrow(ConfigurationError);
      expect(() => new PrincipalDirectory(store, { trustedDeviceMs: 0 })).toThrow(ConfigurationError);
    } finally {
      await store.close();
      cleanup();
    }
  });
});
