import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/audit/event.js';
import { ConfigurationError } from '../../src/index.js';
import { lifecycleEventOf } from '../../src/notify/lifecycle-event.js';
import { checkNotifications, resolveNotifications } from '../../src/notify/notify-config.js';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptAt, retrySchedule } from '../../src/notify/retry-schedule.js';
import { loadServeConfig } from '../../src/server/serve-config.js';
import { tempDir } from '../support/engine.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const temp = tempDir();
afterAll(() => temp.cleanup());

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigurationError');
}

describe('notification config', () => {
  it('a webhook secret without whsec_, not base64, or of the wrong size is an error naming its field', () => {
    const hook = (secret: string) => ({ webhook: { url: 'https://hooks.example.com/x', secret } });
    expect(configError(() => checkNotifications(hook(randomBytes(32).toString('base64'))))).toMatch(
      /^notifications\.webhook\.secret: must start with "whsec_"/,
    );
    expect(configError(() => checkNotifications(hook('whsec_not base64!!')))).toMatch(
      /^notifications\.webhook\.secret: the part after "whsec_" must be base64/,
    );
    expect(configError(() => checkNotifications(hook(`whsec_${randomBytes(8).toString('base64')}`)))).toMatch(
      /^notifications\.webhook\.secret: must encode 24 to 64 bytes \(it has 8\)/,
    );
    expect(checkNotifications(hook(SECRET)).webhook?.secret).toBe(SECRET);
  });

  it('flags and environment variables are named in their errors; a flag wins over its variable', () => {
    const env = { COUNTERSIGN_WEBHOOK_URL: 'https://env.example.com/h', COUNTERSIGN_WEBHOOK_SECRET: 'nope' };
    expect(configError(() => resolveNotifications({ flags: {}, env }))).toMatch(
      /^COUNTERSIGN_WEBHOOK_SECRET: must start with "whsec_"/,
    );
    expect(configError(() => resolveNotifications({ flags: { webhookSecret: 'whsec_%%%' }, env }))).toMatch(
      /^--webhook-secret: the part after "whsec_" must be base64/,
    );
    const resolved = resolveNotifications({
      flags: { webhook: 'http://127.0.0.1:9/h', webhookSecret: SECRET },
      env,
    });
    expect(resolved?.webhook).toEqual({ url: 'http://127.0.0.1:9/h', secret: SECRET });
    expect(
      configError(() =>
        resolveNotifications({ flags: { webhook: 'ftp://x/y', webhookSecret: SECRET }, env: {} }),
      ),
    ).toBe('--webhook: must be a http:// or https:// URL');
    expect(configError(() => resolveNotifications({ flags: { webhook: 'https://x/y' }, env: {} }))).toMatch(
      /^--webhook needs --webhook-secret/,
    );
    expect(
      configError(() => resolveNotifications({ flags: { smtp: 'smtp://127.0.0.1:25' }, env: {} })),
    ).toMatch(/^--smtp needs --mail-from/);
    expect(
      configError(() =>
        resolveNotifications({ flags: { smtp: 'smtp://127.0.0.1:25', mailFrom: 'nobody' }, env: {} }),
      ),
    ).toBe('--mail-from: "nobody" is not an email address');
    expect(
      resolveNotifications({
        flags: {},
        env: { COUNTERSIGN_SMTP_URL: 'smtp://127.0.0.1:2525', COUNTERSIGN_MAIL_FROM: 'a@b.test' },
      })?.email,
    ).toEqual({ smtpUrl: 'smtp://127.0.0.1:2525', from: 'a@b.test' });
    expect(resolveNotifications({ flags: {}, env: {} })).toBeUndefined();
  });

  it('a config file with a bad notifications secret does not load, naming the file and field', async () => {
    const file = join(temp.dir, 'bad-notify.config.mjs');
    writeFileSync(
      file,
      `export default { operations: [{ kind: 'x', handback: () => '' }], notifications: { webhook: { url: 'https://h.example.com', secret: 'plain' } } };\n`,
    );
    await expect(loadServeConfig(file)).rejects.toThrow(
      `--config ${file}: notifications.webhook.secret: must start with "whsec_"`,
    );
  });

  it('retry settings are checked and filled from the defaults', () => {
    expect(retrySchedule({ delaysMs: [10, 20] })).toEqual({ ...DEFAULT_RETRY_SCHEDULE, delaysMs: [10, 20] });
    expect(configError(() => retrySchedule({ delaysMs: [10, -1] }))).toBe(
      'notifications.retry.delaysMs[1]: must be a number of milliseconds above 0',
    );
    expect(configError(() => retrySchedule({ every: 5 }))).toMatch(
      /^notifications\.retry\.every: not a retry setting/,
    );
    expect(configError(() => retrySchedule({ jitter: 1 }))).toMatch(/^notifications\.retry\.jitter/);
  });

  it('finished deliveries are kept 30 days unless retainDays says otherwise (false: forever)', () => {
    const hook = { webhook: { url: 'https://hooks.example.com/x', secret: SECRET } };
    expect(checkNotifications(hook).retainMs).toBe(30 * 86_400_000);
    expect(checkNotifications({ ...hook, retainDays: 90 }).retainMs).toBe(90 * 86_400_000);
    expect(checkNotifications({ ...hook, retainDays: false }).retainMs).toBe(false);
    for (const bad of [0, 1.5, -3, '30', true, 40_000])
      expect(configError(() => checkNotifications({ ...hook, retainDays: bad }))).toBe(
        'notifications.retainDays: must be a whole number of days from 1 to 36500, or false',
      );
  });
});

describe('retry schedule', () => {
  const t0 = Date.UTC(2026, 11, 1);
  it('by default: 1 s, 5 s, 30 s, 2 min, 10 min, 1 h, then hourly, dead after 24 h', () => {
    const waits: number[] = [];
    let now = t0;
    for (let failures = 1; ; failures++) {
      const next = nextAttemptAt(DEFAULT_RETRY_SCHEDULE, failures, t0, now, 0.5);
      if (next === 'dead') break;
      waits.push(next - now);
      now = next;
    }
    expect(waits.slice(0, 7)).toEqual([1_000, 5_000, 30_000, 120_000, 600_000, 3_600_000, 3_600_000]);
    expect(now - t0).toBeLessThanOrEqual(24 * 3_600_000);
    expect(now - t0).toBeGreaterThan(23 * 3_600_000);
    expect(waits).toHaveLength(6 + 22);
  });

  it('jitter spreads each wait by at most ±20 %', () => {
    expect(nextAttemptAt(DEFAULT_RETRY_SCHEDULE, 3, t0, t0, 0)).toBe(t0 + 24_000);
    expect(nextAttemptAt(DEFAULT_RETRY_SCHEDULE, 3, t0, t0, 0.999_999)).toBe(t0 + 36_000);
  });
});

describe('lifecycle events of audit steps', () => {
  const event = (step: AuditEvent['step'], detail: Record<string, unknown> = {}, proposalId = 'prp_1') =>
    ({ step, detail, proposalId }) as unknown as AuditEvent;
  it('maps each step to its event and status', () => {
    expect(lifecycleEventOf(event('proposed'), [])).toEqual({ type: 'proposal.created', status: 'pending' });
    expect(lifecycleEventOf(event('edited'), [])).toEqual({ type: 'proposal.decided', status: 'superseded' });
    expect(lifecycleEventOf(event('outcome', { outcome: 'needs_reconciliation' }), [])).toEqual({
      type: 'proposal.outcome',
      status: 'needs_reconciliation',
    });
    // An approval toward an incomplete quorum tells the other approvers; the proposal stays pending.
    expect(lifecycleEventOf(event('partially_approved'), [])).toEqual({
      type: 'proposal.approval_given',
      status: 'pending',
    });
    for (const step of ['claimed', 'command', 'denied', 'granted'] as const)
      expect(lifecycleEventOf(event(step), [])).toBeUndefined();
  });
  it("a reconciliation's outcome is announced once, as reconciled, with the provider's answer", () => {
    const reconciled = event('reconciled');
    expect(lifecycleEventOf(reconciled, [])).toBeUndefined();
    expect(lifecycleEventOf(event('outcome', { outcome: 'succeeded' }), [reconciled])).toEqual({
      type: 'proposal.outcome',
      status: 'reconciled',
      resolution: 'succeeded',
    });
    // Another proposal's reconciliation in the same transaction does not count.
    expect(lifecycleEventOf(event('outcome', { outcome: 'succeeded' }, 'prp_2'), [reconciled])).toEqual({
      type: 'proposal.outcome',
      status: 'succeeded',
    });
  });
});
