import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type DemoWorld, demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { canonicalize } from '../../src/canonical/canonicalize.js';
import { createEngine, type Engine } from '../../src/index.js';
import type { SendResult } from '../../src/notify/channel.js';
import { sealDelivery } from '../../src/notify/delivery-seal.js';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import { type Notifications, createNotifications } from '../../src/notify/notifications.js';
import { checkNotifications } from '../../src/notify/notify-config.js';
import { type OutboxRecord, outboxOf } from '../../src/store/sql-outbox.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { agent, tempDir } from '../support/engine.js';
import { serve } from '../support/serve.js';
import { type Receiver, startReceiver } from '../notify/support/receiver.js';
import { BACKENDS, type Backend, createBackend, type RawSql } from '../support/backends.js';

// A database writer (SECURITY.md) can run any SQL on the store but holds neither the seal key nor
// the webhook secret. The webhook sender signs whatever payload a row holds with the real secret,
// so a row it inserts or edits must never reach a sender.
const SEAL_KEY = 'k'.repeat(48);
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const NO_SEAL = 'unsealed';
const MISMATCH = 'seal_mismatch';
const REFUSED = 'notification not sent: not sealed by this server';

interface LogLine {
  readonly level: 'info' | 'warn' | 'error';
  readonly fields: object;
  readonly message: string;
}

const COLUMNS = [
  'tenant',
  'id',
  'event_id',
  'channel',
  'type',
  'proposal_id',
  'payload_json',
  'status',
  'attempts',
  'next_at',
  'lease_until',
  'lease_owner',
  'last_error',
  'last_attempt_at',
  'delivered_at',
  'retry_from',
  'created_at',
  'seal',
] as const;
type Column = (typeof COLUMNS)[number];

/** What a database writer's hand-made row looks like: a decided-and-approved event, due now. */
function forgedRow(overrides: Partial<Record<Column, unknown>> = {}): Record<Column, unknown> {
  const now = Date.now();
  const payload = {
    type: 'proposal.decided',
    timestamp: new Date(now).toISOString(),
    data: { eventId: 'evt_forged', tenant: 'acme', proposalId: 'prp_forged', status: 'approved' },
  };
  return {
    tenant: 'acme',
    id: 'dlv_forged',
    event_id: 'evt_forged',
    channel: 'webhook',
    type: 'proposal.decided',
    proposal_id: 'prp_forged',
    payload_json: canonicalize(payload),
    status: 'pending',
    attempts: 0,
    next_at: now,
    lease_until: null,
    lease_owner: null,
    last_error: null,
    last_attempt_at: null,
    delivered_at: null,
    retry_from: now,
    created_at: now,
    seal: null,
    ...overrides,
  };
}

async function insertRow(sql: RawSql, row: Record<Column, unknown>): Promise<void> {
  await sql.run(
    `INSERT INTO countersign_outbox (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
    COLUMNS.map((c) => row[c]),
  );
}

for (const name of BACKENDS) {
  describe(`a database writer forging notifications (${name})`, () => {
    let backend: Backend | undefined;
    let store: Store;
    let sql: RawSql;
    let engine: Engine;
    let world: DemoWorld;
    let notifications: Notifications;
    let receiver: Receiver | undefined;
    let logs: LogLine[];
    let runs = 0;

    afterEach(async () => {
      await engine?.close();
      await sql?.close();
      await receiver?.close();
      await backend?.dispose();
      backend = undefined;
      receiver = undefined;
    });

    /** One store, engine and webhook channel to a real receiver, sealed with the key or not. */
    const setup = async (sealKey: string | undefined) => {
      backend = await createBackend(name);
      store = await backend.open();
      sql = await backend.sql();
      receiver = await startReceiver();
      world = demoWorld();
      for (let i = 0; i < 8; i++) {
        world.invoices.add({
          tenant: 'acme',
          id: `inv-f-${i}`,
          supplierName: 'Supplier',
          supplierAccount: 'acct-supplier-1',
          dueMinor: 5_000 + i,
          currency: 'USD',
          status: 'open',
        });
      }
      logs = [];
      const operations = demoOperations(world);
      notifications = createNotifications(
        checkNotifications({ webhook: { url: receiver.url, secret: SECRET } }),
        {
          store,
          operations,
          publicUrl: 'https://approvals.example.test',
          approvers: async () => [],
          logger: {
            info: (fields, message) => logs.push({ level: 'info', fields, message }),
            warn: (fields, message) => logs.push({ level: 'warn', fields, message }),
            error: (fields, message) => logs.push({ level: 'error', fields, message }),
          },
          ...(sealKey ? { sealKey } : {}),
        },
      );
      engine = await createEngine({
        store,
        operations,
        stepWriters: [notifications.writer],
        ...(sealKey ? { sealKey } : {}),
      });
    };

    const propose = async (invoice: string) => {
      const r = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: invoice },
        tenant: 'acme',
        resource: `invoice:${invoice}`,
        requestedBy: agent().id,
        runId: `run-${runs++}`,
      });
      if (r.kind !== 'proposed') throw new Error(`expected proposed, got ${r.kind}`);
      return r.proposal;
    };
    const rows = () =>
      store.transaction((tx) => outboxOf(tx, store.capabilities).list('acme', { limit: 100 })) as Promise<
        OutboxRecord[]
      >;
    const row = async (id: string) => {
      const found = await store.transaction((tx) => outboxOf(tx, store.capabilities).get('acme', id));
      if (!found) throw new Error(`no delivery ${id}`);
      return found;
    };
    const rowOf = async (proposalId: string) => {
      const found = (await rows()).filter((r) => r.proposalId === proposalId);
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    const warnings = () => logs.filter((l) => l.level === 'warn');
    const refusal = (deliveryId: string, reason: 'unsealed' | 'seal_mismatch') => ({
      level: 'warn',
      fields: { tenant: 'acme', deliveryId, reason },
      message: REFUSED,
    });
    const expectDead = async (id: string, lastError: string) => {
      const r = await row(id);
      expect([r.status, r.attempts, r.lastError, r.deliveredAt]).toEqual(['dead', 1, lastError, null]);
    };

    describe('with a seal key', () => {
      it('a genuine delivery is sealed and sent, signed with the webhook secret', async () => {
        await setup(SEAL_KEY);
        const proposal = await propose('inv-f-0');
        const before = await rowOf(proposal.id);
        expect(before.seal).toMatch(/^[0-9a-f]{64}$/);
        expect(before.seal).toBe(sealDelivery(before, SEAL_KEY));
        expect(await notifications.dispatcher.runOnce()).toBe(1);
        const after = await row(before.id);
        expect([after.status, after.attempts, after.lastError]).toEqual(['delivered', 1, null]);
        // Retries and redeliveries keep the seal: it is written once.
        expect(after.seal).toBe(before.seal);
        expect(receiver!.received).toHaveLength(1);
        const got = receiver!.received[0]!;
        const verified = new Webhook(SECRET).verify(got.body, got.headers) as {
          data: { proposalId: string };
        };
        expect(verified.data.proposalId).toBe(proposal.id);
        expect(warnings()).toEqual([]);
      });

      it('a row inserted by hand (no seal, or a made-up one) is never sent: dead, with the reason', async () => {
        await setup(SEAL_KEY);
        await insertRow(sql, forgedRow());
        await insertRow(
          sql,
          forgedRow({ id: 'dlv_forged_2', event_id: 'evt_forged_2', seal: randomBytes(32).toString('hex') }),
        );
        expect(await notifications.dispatcher.runOnce()).toBe(2);
        await expectDead('dlv_forged', NO_SEAL);
        await expectDead('dlv_forged_2', MISMATCH);
        expect(receiver!.received).toEqual([]);
        expect(warnings()).toEqual(
          expect.arrayContaining([
            refusal('dlv_forged', 'unsealed'),
            refusal('dlv_forged_2', 'seal_mismatch'),
          ]),
        );
        expect(warnings()).toHaveLength(2);
        // The warning names the row, never its payload.
        expect(JSON.stringify(logs)).not.toContain('approved');
        // Nothing is retried: another pass finds nothing due.
        expect(await notifications.dispatcher.runOnce()).toBe(0);
        expect(receiver!.received).toEqual([]);
      });

      // Only SQLite stores text in an integer column; PostgreSQL refuses the insert itself.
      if (name === 'sqlite')
        it('a row whose creation time is not a number (SQLite keeps the text) is refused, not retried forever', async () => {
          await setup(SEAL_KEY);
          await insertRow(sql, forgedRow({ created_at: 'yesterday', seal: randomBytes(32).toString('hex') }));
          expect(await notifications.dispatcher.runOnce()).toBe(1);
          await expectDead('dlv_forged', MISMATCH);
          expect(receiver!.received).toEqual([]);
          expect(warnings()).toEqual([refusal('dlv_forged', 'seal_mismatch')]);
        });

      it('a genuine pending row whose payload was edited by hand is not sent', async () => {
        await setup(SEAL_KEY);
        const proposal = await propose('inv-f-1');
        const genuine = await rowOf(proposal.id);
        const payload = JSON.parse(genuine.payloadJson) as { data: Record<string, unknown> };
        const edited = canonicalize({
          ...payload,
          data: { ...payload.data, title: 'Pay 1.00 USD', status: 'approved' },
        });
        expect(
          await sql.run('UPDATE countersign_outbox SET payload_json = ? WHERE tenant = ? AND id = ?', [
            edited,
            'acme',
            genuine.id,
          ]),
        ).toBe(1);
        expect(await notifications.dispatcher.runOnce()).toBe(1);
        await expectDead(genuine.id, MISMATCH);
        expect(receiver!.received).toEqual([]);
        expect(warnings()).toEqual([refusal(genuine.id, 'seal_mismatch')]);
      });

      it('every sealed column counts: an edit of the event, type, proposal, channel, time or tenant is refused', async () => {
        await setup(SEAL_KEY);
        const edits: readonly (readonly [Column, unknown])[] = [
          ['event_id', 'evt_other'],
          ['type', 'proposal.outcome'],
          ['proposal_id', 'prp_other'],
          ['channel', 'email'],
          ['created_at', Date.now() - 1_000],
          ['id', 'dlv_renamed'],
        ];
        const edited: string[] = [];
        for (const [i, [column, value]] of edits.entries()) {
          const genuine = await rowOf((await propose(`inv-f-${i}`)).id);
          await sql.run(`UPDATE countersign_outbox SET ${column} = ? WHERE tenant = ? AND id = ?`, [
            value,
            'acme',
            genuine.id,
          ]);
          edited.push(column === 'id' ? String(value) : genuine.id);
        }
        // A genuine row moved to another tenant is refused there too.
        const moved = await rowOf((await propose('inv-f-7')).id);
        await sql.run('UPDATE countersign_outbox SET tenant = ? WHERE tenant = ? AND id = ?', [
          'globex',
          'acme',
          moved.id,
        ]);
        expect(await notifications.dispatcher.runOnce()).toBe(edits.length + 1);
        for (const id of edited) await expectDead(id, MISMATCH);
        const elsewhere = await store.transaction((tx) =>
          outboxOf(tx, store.capabilities).get('globex', moved.id),
        );
        expect([elsewhere?.status, elsewhere?.lastError]).toEqual(['dead', MISMATCH]);
        expect(receiver!.received).toEqual([]);
        expect(warnings().map((w) => (w.fields as { reason: string }).reason)).toEqual(
          Array(edits.length + 1).fill('seal_mismatch'),
        );
      });

      it("a genuine row's seal copied onto another row is refused; the genuine row is still sent", async () => {
        await setup(SEAL_KEY);
        const proposal = await propose('inv-f-2');
        const genuine = await rowOf(proposal.id);
        // The forged event, and a byte-for-byte copy of the genuine row under a new id: both carry its seal.
        await insertRow(sql, forgedRow({ proposal_id: proposal.id, seal: genuine.seal }));
        await insertRow(
          sql,
          forgedRow({
            id: 'dlv_copy',
            event_id: genuine.eventId,
            type: genuine.type,
            proposal_id: genuine.proposalId,
            payload_json: genuine.payloadJson,
            created_at: genuine.createdAt,
            seal: genuine.seal,
          }),
        );
        expect(await notifications.dispatcher.runOnce()).toBe(3);
        await expectDead('dlv_forged', MISMATCH);
        await expectDead('dlv_copy', MISMATCH);
        expect((await row(genuine.id)).status).toBe('delivered');
        expect(receiver!.received.map((r) => r.headers['webhook-id'])).toEqual([genuine.eventId]);
        expect(receiver!.received[0]!.body).not.toContain('prp_forged');
      });

      it('a forged email row is never handed to the email sender', async () => {
        await setup(SEAL_KEY);
        const mailed: string[] = [];
        const dispatcher = createDispatcher({
          store,
          sealKey: SEAL_KEY,
          senders: {
            email: async (delivery): Promise<SendResult> => {
              mailed.push(delivery.id);
              return { kind: 'delivered' };
            },
          },
        });
        await insertRow(sql, forgedRow({ channel: 'email', type: 'proposal.created' }));
        expect(await dispatcher.runOnce()).toBe(1);
        await expectDead('dlv_forged', NO_SEAL);
        expect(mailed).toEqual([]);
      });

      it('a dead forged row queued again by redelivery is refused again', async () => {
        await setup(SEAL_KEY);
        await insertRow(sql, forgedRow());
        await notifications.dispatcher.runOnce();
        const requeued = await store.transaction((tx) =>
          outboxOf(tx, store.capabilities).redeliver('acme', 'dlv_forged', Date.now()),
        );
        expect(requeued).toBe(true);
        expect(await notifications.dispatcher.runOnce()).toBe(1);
        await expectDead('dlv_forged', NO_SEAL);
        expect(receiver!.received).toEqual([]);
      });

      it('a key under 32 bytes stops the wiring', async () => {
        await setup(SEAL_KEY);
        expect(() => createDispatcher({ store, senders: {}, sealKey: 'short' })).toThrow(
          'sealKey: must be at least 32 bytes',
        );
      });
    });

    describe('without a seal key (as before: SECURITY.md says a key is needed)', () => {
      it('rows are unsealed and a row inserted by hand is sent, signed with the real secret', async () => {
        await setup(undefined);
        const proposal = await propose('inv-f-3');
        expect((await rowOf(proposal.id)).seal).toBeNull();
        await insertRow(sql, forgedRow());
        expect(await notifications.dispatcher.runOnce()).toBe(2);
        expect((await row('dlv_forged')).status).toBe('delivered');
        const forged = receiver!.received.find((r) => r.headers['webhook-id'] === 'evt_forged');
        const verified = new Webhook(SECRET).verify(forged!.body, forged!.headers) as {
          type: string;
          data: { status: string };
        };
        expect([verified.type, verified.data.status]).toEqual(['proposal.decided', 'approved']);
        expect(warnings()).toEqual([]);
      });
    });
  });
}

describe('countersign serve with COUNTERSIGN_SEAL_KEY and a webhook', () => {
  it('seals the deliveries it writes and sends none inserted by hand', async () => {
    const temp = tempDir();
    const receiver = await startReceiver();
    const db = join(temp.dir, 'serve.db');
    process.env['COUNTERSIGN_SEAL_KEY'] = SEAL_KEY;
    let server: Awaited<ReturnType<typeof serve>> | undefined;
    let store: SqliteStore | undefined;
    try {
      server = await serve([
        '--demo',
        '--db',
        db,
        '--port',
        '0',
        '--webhook',
        receiver.url,
        '--webhook-secret',
        SECRET,
      ]);
      // The demo's own proposals: written sealed by the served engine, delivered.
      await receiver.waitFor(1);
      store = new SqliteStore({ path: db });
      const raw = store.database;
      raw
        .prepare(
          `INSERT INTO countersign_outbox (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
        )
        .run(...COLUMNS.map((c) => forgedRow()[c]));
      const deadline = Date.now() + 20_000;
      let forged: { status: string; last_error: string | null } | undefined;
      while (Date.now() < deadline) {
        forged = raw
          .prepare("SELECT status, last_error FROM countersign_outbox WHERE id = 'dlv_forged'")
          .get() as { status: string; last_error: string | null } | undefined;
        if (forged?.status !== 'pending') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(forged).toEqual({ status: 'dead', last_error: NO_SEAL });
      expect(receiver.received.map((r) => r.headers['webhook-id'])).not.toContain('evt_forged');
      const genuine = raw.prepare("SELECT seal FROM countersign_outbox WHERE id <> 'dlv_forged'").all() as {
        seal: string | null;
      }[];
      expect(genuine.length).toBeGreaterThan(0);
      for (const { seal } of genuine) expect(seal).toMatch(/^[0-9a-f]{64}$/);
      const warning = server.stderr
        .join('')
        .split('\n')
        .filter((line) => line.includes(REFUSED))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(warning).toHaveLength(1);
      expect(warning[0]).toMatchObject({
        level: 40,
        tenant: 'acme',
        deliveryId: 'dlv_forged',
        reason: 'unsealed',
      });
      expect(warning[0]).not.toHaveProperty('payload');
    } finally {
      delete process.env['COUNTERSIGN_SEAL_KEY'];
      if (server) expect(await server.stop()).toBe(0);
      await store?.close();
      await receiver.close();
      temp.cleanup();
    }
  }, 60_000);
});
