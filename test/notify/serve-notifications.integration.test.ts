import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../support/engine.js';
import { serve } from '../support/serve.js';
import { startReceiver } from './support/receiver.js';
import { startSmtpReceiver } from './support/smtp-receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const temp = tempDir();
afterAll(() => temp.cleanup());

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('countersign serve --webhook --webhook-secret --smtp --mail-from', () => {
  it('delivers the demo proposals as signed webhooks and emails; admins list and redeliver them', async () => {
    const receiver = await startReceiver();
    const smtp = await startSmtpReceiver();
    const db = join(temp.dir, 'serve.db');
    const server = await serve([
      '--demo',
      '--db',
      db,
      '--port',
      '0',
      '--webhook',
      receiver.url,
      '--webhook-secret',
      SECRET,
      '--smtp',
      smtp.url,
      '--mail-from',
      'approvals@countersign.test',
    ]);
    const store = new SqliteStore({ path: db });
    try {
      expect(server.stdout.join('')).toContain('notifications: webhook, email');
      await receiver.waitFor(3);
      const created = await until('a proposal.created webhook', () =>
        receiver.received.find((r) => (JSON.parse(r.body) as { type: string }).type === 'proposal.created'),
      );
      const payload = new Webhook(SECRET).verify(created.body, created.headers) as {
        data: { approvalUrl: string; proposalId: string; tenant: string };
      };
      expect(payload.data.approvalUrl).toBe(`${server.url}/proposals/${payload.data.proposalId}`);
      await until('an approval email', () => (smtp.mails.length > 0 ? smtp.mails : undefined));
      for (const mail of smtp.mails) {
        const domains = new Set(mail.to.map((t) => t.split('@')[1]));
        expect(domains.size).toBe(1);
      }

      const directory = new PrincipalDirectory(store);
      const adminToken = await directory.issueOperatorToken({ email: 'admin@acme.test' });
      const approverToken = await directory.issueOperatorToken({ email: 'approver@acme.test' });
      const api = (path: string, token: string, method = 'GET') =>
        fetch(`${server.url}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}` } });

      const refused = await api('/deliveries', approverToken);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { reason: string }).reason).toBe('forbidden');

      type Item = { id: string; eventId: string; channel: string; status: string; attempts: number };
      const items = await until('delivered acme webhooks', async () => {
        const response = await api('/deliveries?status=delivered&limit=200', adminToken);
        expect(response.status).toBe(200);
        const body = (await response.json()) as { items: Item[] };
        return body.items.some((i) => i.channel === 'webhook') ? body.items : undefined;
      });
      const acmeEvents = new Set(
        receiver.received
          .map((r) => JSON.parse(r.body) as { data: { tenant: string; eventId: string } })
          .filter((b) => b.data.tenant === 'acme')
          .map((b) => b.data.eventId),
      );
      // Only acme's deliveries, each with its attempts.
      for (const item of items) {
        expect(item.status).toBe('delivered');
        expect(item.attempts).toBe(1);
        if (item.channel === 'webhook') expect(acmeEvents.has(item.eventId)).toBe(true);
      }
      const hook = items.find((i) => i.channel === 'webhook')!;
      const before = receiver.received.length;
      const again = await api(`/deliveries/${hook.id}/redeliver`, adminToken, 'POST');
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ id: hook.id, status: 'pending', queued: true });
      await receiver.waitFor(before + 1);
      const redelivered = await until('the redelivered webhook', () =>
        receiver.received.slice(before).find((r) => r.headers['webhook-id'] === hook.eventId),
      );
      expect(() => new Webhook(SECRET).verify(redelivered.body, redelivered.headers)).not.toThrow();
      const missing = await api('/deliveries/dlv_000000000000000000000000/redeliver', adminToken, 'POST');
      expect(missing.status).toBe(404);
    } finally {
      expect(await server.stop()).toBe(0);
      await store.close();
      await receiver.close();
      await smtp.close();
    }
  }, 60_000);

  it('refuses to start with a webhook secret that is not whsec_ base64, naming the flag', async () => {
    const stderr: string[] = [];
    const code = await runCli(
      [
        'serve',
        '--demo',
        '--db',
        join(temp.dir, 'bad.db'),
        '--webhook',
        'http://127.0.0.1:9/h',
        '--webhook-secret',
        'hunter2',
      ],
      { stdout: () => {}, stderr: (t) => stderr.push(t), stdin: async () => '' },
    );
    expect(code).not.toBe(0);
    expect(stderr.join('')).toContain('--webhook-secret: must start with "whsec_"');
  });
});
