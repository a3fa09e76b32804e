import { type ChatUpdateArguments, ErrorCode, LogLevel, WebClient } from '@slack/web-api';
import { type DeliveryError, networkFailure } from './delivery-error.js';
import type { ResolvedSlack } from './notify-config.js';

/** A Block Kit block, as `@slack/web-api` types it (see `slackCard`). */
export type SlackBlock = Extract<ChatUpdateArguments, { blocks: unknown }>['blocks'][number];

/** A message's content: the notification text (shown where blocks are not) and its blocks. */
export interface SlackMessageContent {
  readonly text: string;
  readonly blocks: readonly SlackBlock[];
}

/** What one Web API call came to: its value, or why it failed (a code from a closed list, never a message). */
export type SlackCall<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | { readonly kind: 'failed'; readonly error: DeliveryError };

/** A Slack user as the interaction mapping needs them: the email Slack verified, if any. */
export interface SlackUserInfo {
  /** The profile email, only when Slack confirmed it (`is_email_confirmed`) and the user is an active person. */
  readonly verifiedEmail: string | null;
}

/** The four Web API methods countersign calls, over `@slack/web-api`. */
export interface SlackApi {
  postMessage(
    message: SlackMessageContent & { readonly channel: string },
  ): Promise<SlackCall<{ readonly channel: string; readonly ts: string }>>;
  update(
    message: SlackMessageContent & { readonly channel: string; readonly ts: string },
  ): Promise<SlackCall<null>>;
  postEphemeral(message: {
    readonly channel: string;
    readonly user: string;
    readonly text: string;
  }): Promise<SlackCall<null>>;
  userInfo(user: string): Promise<SlackCall<SlackUserInfo>>;
}

/**
 * Default timeout of one Web API call: 5 s (Slack answers in well under a second; a delivery makes
 * up to two calls, and the outbox lease covers both).
 */
export const DEFAULT_SLACK_TIMEOUT_MS = 5_000;

// The client's own log lines are dropped: its debug lines would print request details, and every
// failure reaches countersign as a result it logs (or stores) by code.
const silent = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.ERROR,
  setName: () => {},
};

/** What a thrown Web API error means, by its class code: Slack's error, an HTTP status, or the network. */
export function slackFailure(error: unknown): DeliveryError {
  const e = error as {
    code?: unknown;
    data?: { error?: unknown };
    statusCode?: unknown;
    original?: unknown;
  } | null;
  switch (e?.code) {
    case ErrorCode.PlatformError:
      return { code: 'slack_error', slackError: typeof e.data?.error === 'string' ? e.data.error : '' };
    case ErrorCode.RateLimitedError:
      return { code: 'http_status', status: 429 };
    case ErrorCode.HTTPError:
      return Number.isSafeInteger(e.statusCode)
        ? { code: 'http_status', status: e.statusCode as number }
        : { code: 'invalid_response' };
    case ErrorCode.RequestError:
      return networkFailure(e.original);
    default:
      return networkFailure(error);
  }
}

async function call<T>(run: () => Promise<T>): Promise<SlackCall<T>> {
  try {
    return { kind: 'ok', value: await run() };
  } catch (error) {
    return { kind: 'failed', error: slackFailure(error) };
  }
}

/**
 * The Slack Web API at `config.apiUrl` with the bot token. The client never retries and never
 * waits out a rate limit (`retries: 0`, `rejectRateLimitedCalls`): a failed post is retried by the
 * notification outbox on its schedule, so nothing waits inside a request or a lease.
 */
export function slackApi(config: Pick<ResolvedSlack, 'botToken' | 'apiUrl' | 'timeoutMs'>): SlackApi {
  const client = new WebClient(config.botToken, {
    slackApiUrl: config.apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: config.timeoutMs ?? DEFAULT_SLACK_TIMEOUT_MS,
    allowAbsoluteUrls: false,
    logger: silent,
  });
  return {
    postMessage: (m) =>
      call(async () => {
        const answer = await client.chat.postMessage({
          channel: m.channel,
          text: m.text,
          blocks: [...m.blocks],
          unfurl_links: false,
          unfurl_media: false,
        });
        if (typeof answer.channel !== 'string' || typeof answer.ts !== 'string')
          throw Object.assign(new Error('chat.postMessage answered without channel and ts'), {
            code: 'EPROTOCOL',
          });
        return { channel: answer.channel, ts: answer.ts };
      }),
    update: (m) =>
      call(async () => {
        await client.chat.update({ channel: m.channel, ts: m.ts, text: m.text, blocks: [...m.blocks] });
        return null;
      }),
    postEphemeral: (m) =>
      call(async () => {
        await client.chat.postEphemeral({ channel: m.channel, user: m.user, text: m.text });
        return null;
      }),
    userInfo: (user) =>
      call(async () => {
        const answer = await client.users.info({ user });
        const u = answer.user;
        const email = u?.profile?.email;
        const person = u !== undefined && u.deleted !== true && u.is_bot !== true;
        return {
          verifiedEmail:
            person && u.is_email_confirmed === true && typeof email === 'string' && email !== ''
              ? email
              : null,
        };
      }),
  };
}
