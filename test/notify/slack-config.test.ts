import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/canonical/errors.js';
import { checkNotifications, resolveNotifications, SLACK_API_URL } from '../../src/notify/notify-config.js';

const env = {
  COUNTERSIGN_SLACK_BOT_TOKEN: 'xoxb-123-456-abcdef',
  COUNTERSIGN_SLACK_SIGNING_SECRET: 'f00dfeed',
  COUNTERSIGN_SLACK_CHANNEL: 'C0APPROVALS',
};

describe('Slack settings', () => {
  it('come from COUNTERSIGN_SLACK_* with Slack’s own API by default', () => {
    const resolved = resolveNotifications({ flags: {}, env });
    expect(resolved?.slack).toEqual({
      botToken: env.COUNTERSIGN_SLACK_BOT_TOKEN,
      signingSecret: env.COUNTERSIGN_SLACK_SIGNING_SECRET,
      channel: 'C0APPROVALS',
      apiUrl: SLACK_API_URL,
    });
    const faked = resolveNotifications({
      flags: {},
      env: { ...env, COUNTERSIGN_SLACK_API_URL: 'http://127.0.0.1:9999/api' },
    });
    expect(faked?.slack?.apiUrl).toBe('http://127.0.0.1:9999/api/');
  });

  it('name the variable that is missing', () => {
    const { COUNTERSIGN_SLACK_CHANNEL: _, ...partial } = env;
    expect(() => resolveNotifications({ flags: {}, env: partial })).toThrow(
      new ConfigurationError(
        'COUNTERSIGN_SLACK_BOT_TOKEN needs COUNTERSIGN_SLACK_CHANNEL (or notifications.slack.channel)',
      ),
    );
  });

  it('refuse a token that is not a Slack token without repeating it', () => {
    const token = 'secret-value-that-is-no-token';
    let message = '';
    try {
      resolveNotifications({ flags: {}, env: { ...env, COUNTERSIGN_SLACK_BOT_TOKEN: token } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe('COUNTERSIGN_SLACK_BOT_TOKEN: must be a Slack bot token (xoxb-…)');
    expect(message).not.toContain(token);
  });

  it('come from a config file’s notifications.slack, a variable winning part by part', () => {
    const config = {
      slack: { botToken: 'xoxb-1-2', signingSecret: 's', channel: '#approvals', timeoutMs: 2_000 },
    };
    expect(checkNotifications(config).slack).toEqual({ ...config.slack, apiUrl: SLACK_API_URL });
    const merged = resolveNotifications({ config, flags: {}, env: { COUNTERSIGN_SLACK_CHANNEL: 'C0OTHER' } });
    expect(merged?.slack?.channel).toBe('C0OTHER');
    expect(merged?.slack?.botToken).toBe('xoxb-1-2');
    expect(() => checkNotifications({ slack: { ...config.slack, apiUrl: 'ftp://x' } })).toThrow(
      'notifications.slack.apiUrl: must be a http:// or https:// URL',
    );
  });
});
