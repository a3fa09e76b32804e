import { ConfigurationError } from '../canonical/errors.js';
import { DEFAULT_RETAIN_MS } from './dispatcher.js';
import { type RetrySchedule, retrySchedule } from './retry-schedule.js';
import { webhookKey } from './webhook-signature.js';

/**
 * Notifications of `countersign serve` (config file `notifications`, or the `--webhook`,
 * `--webhook-secret`, `--smtp` and `--mail-from` flags). Every part is optional.
 *
 * @example
 * notifications: {
 *   webhook: { url: 'https://hooks.example.com/countersign', secret: process.env.WEBHOOK_SECRET },
 *   email: { smtpUrl: 'smtp://mail.example.com:587', from: 'Approvals <approvals@example.com>' },
 *   slack: { botToken: process.env.SLACK_BOT_TOKEN, signingSecret: process.env.SLACK_SIGNING_SECRET, channel: 'C0123APPROVALS' },
 *   retry: { delaysMs: [1000, 5000, 30000], thenEveryMs: 3600000, budgetMs: 86400000 },
 *   retainDays: 90,
 * }
 */
export interface NotificationsConfig {
  /** Signed webhooks (Standard Webhooks) of every lifecycle event. */
  readonly webhook?: {
    readonly url: string;
    /** `whsec_` and base64 of 24 to 64 random bytes. */
    readonly secret: string;
    /** Default 10 s. */
    readonly timeoutMs?: number;
  };
  /** An email to the tenant's approvers for each new proposal. */
  readonly email?: {
    /** `smtp://HOST:PORT` or `smtps://HOST:PORT` (credentials as `user:pass@`). */
    readonly smtpUrl: string;
    readonly from: string;
    /** Default 10 s. */
    readonly timeoutMs?: number;
  };
  /**
   * Slack approvals: each new proposal posted to a channel as a card with Approve, Decline and
   * Open in console, updated in place as it is decided (see docs/server.md, "Approving from Slack").
   */
  readonly slack?: SlackConfig;
  /** The retry schedule (default 1 s, 5 s, 30 s, 2 min, 10 min, 1 h, then hourly for 24 h). */
  readonly retry?: Partial<RetrySchedule>;
  /**
   * Days a finished delivery (delivered, skipped or dead) stays listed on the deliveries page and
   * in the API before it is deleted (default 30), or `false` to keep every one.
   */
  readonly retainDays?: number | false;
}

/** Slack's own Web API, the default `apiUrl`. */
export const SLACK_API_URL = 'https://slack.com/api/';

/** The Slack app countersign posts as and receives clicks for (`notifications.slack`). */
export interface SlackConfig {
  /** The bot token, `xoxb-…` (scopes chat:write, users:read, users:read.email). Never logged. */
  readonly botToken: string;
  /** The app's signing secret: every interaction is verified with it. Never logged. */
  readonly signingSecret: string;
  /** The channel of proposals no route names (an id like `C0123ABC`, or `#approvals`). */
  readonly channel: string;
  /** The Web API's base URL (default `https://slack.com/api/`; tests point it at a fake). */
  readonly apiUrl?: string;
  /** A Web API call taking longer fails (and is retried). Default 5 s. */
  readonly timeoutMs?: number;
}

/** A checked Slack config: the API URL filled in (ending in `/`). */
export interface ResolvedSlack extends SlackConfig {
  readonly apiUrl: string;
}

/** A checked notifications config: the retry schedule filled in. */
export interface ResolvedNotifications {
  readonly webhook?: NonNullable<NotificationsConfig['webhook']>;
  readonly email?: NonNullable<NotificationsConfig['email']>;
  readonly slack?: ResolvedSlack;
  readonly retry: RetrySchedule;
  /** How long finished deliveries are kept, in ms (`false`: forever). */
  readonly retainMs: number | false;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function retainMsOf(value: unknown): number | false {
  if (value === undefined) return DEFAULT_RETAIN_MS;
  if (value === false) return false;
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > 36_500)
    throw new ConfigurationError(
      'notifications.retainDays: must be a whole number of days from 1 to 36500, or false',
    );
  return (value as number) * DAY_MS;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new ConfigurationError(`${field}: must be a non-empty string`);
  return value.trim();
}

function url(value: unknown, field: string, protocols: readonly string[]): string {
  const given = text(value, field);
  let parsed: URL;
  try {
    parsed = new URL(given);
  } catch {
    throw new ConfigurationError(`${field}: "${given}" is not a URL`);
  }
  if (!protocols.includes(parsed.protocol))
    throw new ConfigurationError(`${field}: must be a ${protocols.map((p) => `${p}//`).join(' or ')} URL`);
  return given;
}

function timeout(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new ConfigurationError(`${field}: must be a whole number of milliseconds above 0`);
  return value as number;
}

/** Where each setting came from, for error messages that name what to fix. */
export interface FieldNames {
  readonly webhookUrl: string;
  readonly webhookSecret: string;
  readonly smtpUrl: string;
  readonly mailFrom: string;
  readonly slackBotToken?: string;
  readonly slackSigningSecret?: string;
  readonly slackChannel?: string;
  readonly slackApiUrl?: string;
}

const CONFIG_FIELDS: FieldNames = {
  webhookUrl: 'notifications.webhook.url',
  webhookSecret: 'notifications.webhook.secret',
  smtpUrl: 'notifications.email.smtpUrl',
  mailFrom: 'notifications.email.from',
};

function checkSlack(slack: unknown, names: FieldNames): ResolvedSlack {
  if (!isRecord(slack)) throw new ConfigurationError('notifications.slack: must be an object');
  const tokenField = names.slackBotToken ?? 'notifications.slack.botToken';
  const botToken = text(slack['botToken'], tokenField);
  // Only the shape is named, never the value: the token must not reach a log or a terminal.
  if (!/^xox[a-z]-[\w-]+$/.test(botToken))
    throw new ConfigurationError(`${tokenField}: must be a Slack bot token (xoxb-…)`);
  const signingSecret = text(
    slack['signingSecret'],
    names.slackSigningSecret ?? 'notifications.slack.signingSecret',
  );
  const channel = text(slack['channel'], names.slackChannel ?? 'notifications.slack.channel');
  const apiUrl =
    slack['apiUrl'] === undefined
      ? SLACK_API_URL
      : url(slack['apiUrl'], names.slackApiUrl ?? 'notifications.slack.apiUrl', ['http:', 'https:']);
  const timeoutMs = timeout(slack['timeoutMs'], 'notifications.slack.timeoutMs');
  return {
    botToken,
    signingSecret,
    channel,
    apiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
}

/**
 * Checks a notifications config; every problem is a {@link ConfigurationError} naming the field
 * (`notifications.webhook.secret: must start with "whsec_"`, or the flag it came from).
 */
export function checkNotifications(value: unknown, names: FieldNames = CONFIG_FIELDS): ResolvedNotifications {
  if (!isRecord(value)) throw new ConfigurationError('notifications: must be an object');
  const webhook = value['webhook'];
  const email = value['email'];
  let resolvedWebhook: ResolvedNotifications['webhook'];
  if (webhook !== undefined) {
    if (!isRecord(webhook)) throw new ConfigurationError('notifications.webhook: must be an object');
    const secret = text(webhook['secret'], names.webhookSecret);
    webhookKey(secret, names.webhookSecret);
    const timeoutMs = timeout(webhook['timeoutMs'], 'notifications.webhook.timeoutMs');
    resolvedWebhook = {
      url: url(webhook['url'], names.webhookUrl, ['http:', 'https:']),
      secret,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    };
  }
  let resolvedEmail: ResolvedNotifications['email'];
  if (email !== undefined) {
    if (!isRecord(email)) throw new ConfigurationError('notifications.email: must be an object');
    const from = text(email['from'], names.mailFrom);
    if (!/@/.test(from)) throw new ConfigurationError(`${names.mailFrom}: "${from}" is not an email address`);
    const timeoutMs = timeout(email['timeoutMs'], 'notifications.email.timeoutMs');
    resolvedEmail = {
      smtpUrl: url(email['smtpUrl'], names.smtpUrl, ['smtp:', 'smtps:']),
      from,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    };
  }
  const slack = value['slack'] === undefined ? undefined : checkSlack(value['slack'], names);
  return {
    ...(resolvedWebhook ? { webhook: resolvedWebhook } : {}),
    ...(resolvedEmail ? { email: resolvedEmail } : {}),
    ...(slack ? { slack } : {}),
    retry: retrySchedule(value['retry']),
    retainMs: retainMsOf(value['retainDays']),
  };
}

/** The demo's flags and environment variables (a flag wins over its variable). */
export interface NotificationFlags {
  readonly webhook?: string | undefined;
  readonly webhookSecret?: string | undefined;
  readonly smtp?: string | undefined;
  readonly mailFrom?: string | undefined;
}

/**
 * Notifications from a config file's `notifications`, overridden part by part by the flags
 * (`--webhook URL --webhook-secret whsec_…`, `--smtp URL --mail-from ADDRESS`) or their variables
 * (`COUNTERSIGN_WEBHOOK_URL`, `COUNTERSIGN_WEBHOOK_SECRET`, `COUNTERSIGN_SMTP_URL`,
 * `COUNTERSIGN_MAIL_FROM`), and Slack by `COUNTERSIGN_SLACK_BOT_TOKEN`,
 * `COUNTERSIGN_SLACK_SIGNING_SECRET`, `COUNTERSIGN_SLACK_CHANNEL` and `COUNTERSIGN_SLACK_API_URL`
 * (no flags: a secret on the command line is visible to every user of the machine). Undefined
 * when nothing is configured.
 */
export function resolveNotifications(input: {
  readonly config?: unknown;
  readonly flags: NotificationFlags;
  readonly env: Readonly<Record<string, string | undefined>>;
}): ResolvedNotifications | undefined {
  const { flags, env } = input;
  const pick = (flag: string | undefined, flagName: string, variable: string) =>
    flag !== undefined
      ? { value: flag, name: flagName }
      : env[variable] !== undefined && env[variable] !== ''
        ? { value: env[variable], name: variable }
        : undefined;
  const hookUrl = pick(flags.webhook, '--webhook', 'COUNTERSIGN_WEBHOOK_URL');
  const hookSecret = pick(flags.webhookSecret, '--webhook-secret', 'COUNTERSIGN_WEBHOOK_SECRET');
  const smtp = pick(flags.smtp, '--smtp', 'COUNTERSIGN_SMTP_URL');
  const from = pick(flags.mailFrom, '--mail-from', 'COUNTERSIGN_MAIL_FROM');
  const base = input.config === undefined ? {} : input.config;
  if (!isRecord(base)) throw new ConfigurationError('notifications: must be an object');
  const configHook = isRecord(base['webhook']) ? base['webhook'] : undefined;
  const configEmail = isRecord(base['email']) ? base['email'] : undefined;
  if ((hookUrl || hookSecret) && !(hookUrl ?? configHook?.['url']))
    throw new ConfigurationError(
      `${hookSecret?.name ?? '--webhook-secret'} needs --webhook URL (or COUNTERSIGN_WEBHOOK_URL)`,
    );
  if (hookUrl && !(hookSecret ?? configHook?.['secret']))
    throw new ConfigurationError(
      `${hookUrl.name} needs --webhook-secret whsec_… (or COUNTERSIGN_WEBHOOK_SECRET)`,
    );
  if ((smtp || from) && !(smtp ?? configEmail?.['smtpUrl']))
    throw new ConfigurationError(`${from?.name ?? '--mail-from'} needs --smtp URL (or COUNTERSIGN_SMTP_URL)`);
  if (smtp && !(from ?? configEmail?.['from']))
    throw new ConfigurationError(`${smtp.name} needs --mail-from ADDRESS (or COUNTERSIGN_MAIL_FROM)`);
  const merged: Record<string, unknown> = { ...base };
  if (hookUrl || hookSecret)
    merged['webhook'] = {
      ...configHook,
      ...(hookUrl ? { url: hookUrl.value } : {}),
      ...(hookSecret ? { secret: hookSecret.value } : {}),
    };
  if (smtp || from)
    merged['email'] = {
      ...configEmail,
      ...(smtp ? { smtpUrl: smtp.value } : {}),
      ...(from ? { from: from.value } : {}),
    };
  const slackVars = {
    botToken: pick(undefined, '', 'COUNTERSIGN_SLACK_BOT_TOKEN'),
    signingSecret: pick(undefined, '', 'COUNTERSIGN_SLACK_SIGNING_SECRET'),
    channel: pick(undefined, '', 'COUNTERSIGN_SLACK_CHANNEL'),
    apiUrl: pick(undefined, '', 'COUNTERSIGN_SLACK_API_URL'),
  };
  const configSlack = isRecord(base['slack']) ? base['slack'] : undefined;
  const slackGiven = Object.entries(slackVars).filter(([, v]) => v !== undefined);
  if (slackGiven.length > 0) {
    for (const [key, variable] of [
      ['botToken', 'COUNTERSIGN_SLACK_BOT_TOKEN'],
      ['signingSecret', 'COUNTERSIGN_SLACK_SIGNING_SECRET'],
      ['channel', 'COUNTERSIGN_SLACK_CHANNEL'],
    ] as const)
      if (!slackVars[key] && configSlack?.[key] === undefined)
        throw new ConfigurationError(
          `${slackGiven[0]![1]!.name} needs ${variable} (or notifications.slack.${key})`,
        );
    merged['slack'] = {
      ...configSlack,
      ...Object.fromEntries(slackGiven.map(([k, v]) => [k, v!.value])),
    };
  }
  if (merged['webhook'] === undefined && merged['email'] === undefined && merged['slack'] === undefined)
    return undefined;
  return checkNotifications(merged, {
    webhookUrl: hookUrl?.name ?? CONFIG_FIELDS.webhookUrl,
    webhookSecret: hookSecret?.name ?? CONFIG_FIELDS.webhookSecret,
    smtpUrl: smtp?.name ?? CONFIG_FIELDS.smtpUrl,
    mailFrom: from?.name ?? CONFIG_FIELDS.mailFrom,
    ...(slackVars.botToken ? { slackBotToken: slackVars.botToken.name } : {}),
    ...(slackVars.signingSecret ? { slackSigningSecret: slackVars.signingSecret.name } : {}),
    ...(slackVars.channel ? { slackChannel: slackVars.channel.name } : {}),
    ...(slackVars.apiUrl ? { slackApiUrl: slackVars.apiUrl.name } : {}),
  });
}
