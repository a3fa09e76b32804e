import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A message the fake holds: where it was posted and its current content (after updates). */
export interface FakeMessage {
  readonly channel: string;
  readonly ts: string;
  text: string;
  blocks: Record<string, unknown>[];
  /** Every content it had, the post first. */
  readonly history: { text: string; blocks: Record<string, unknown>[] }[];
}

/** A Slack user the fake's users.info answers for. */
export interface FakeUser {
  readonly email?: string;
  readonly confirmed?: boolean;
  readonly deleted?: boolean;
}

/** How the fake fails the next calls: an HTTP status (500, 429) or Slack's `{ ok: false, error }`. */
export type FakeFailure = { readonly status: 500 | 429 } | { readonly error: string };

/** A fake Slack Web API on loopback: chat.postMessage, chat.update, chat.postEphemeral, users.info. */
export interface FakeSlack {
  /** The base URL to give as `COUNTERSIGN_SLACK_API_URL` (ends in `/api/`). */
  readonly apiUrl: string;
  readonly messages: FakeMessage[];
  readonly ephemerals: { channel: string; user: string; text: string }[];
  /** Every call: method and the answer's status (200 also for `ok: false`) and error. */
  readonly calls: { method: string; status: number; error?: string }[];
  readonly users: Map<string, FakeUser>;
  /** Fails every call of `method` (or every method with `*`) until {@link FakeSlack.recover}. */
  fail(method: string, failure: FakeFailure): void;
  recover(): void;
  close(): Promise<void>;
}

/** The channel the fake knows; a post elsewhere is `channel_not_found`. */
export const FAKE_CHANNEL = 'C0APPROVALS';

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if ((req.headers['content-type'] ?? '').includes('application/json')) return JSON.parse(text || '{}');
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(text)) out[k] = v;
  return out;
}

function blocksOf(value: unknown): Record<string, unknown>[] {
  if (typeof value === 'string') return JSON.parse(value) as Record<string, unknown>[];
  return Array.isArray(value) ? (value as Record<string, unknown>[]) : [];
}

/** Starts the fake; calls must carry `Authorization: Bearer <token>`. */
export async function startFakeSlack(
  token: string,
  options: { readonly channels?: readonly string[] } = {},
): Promise<FakeSlack> {
  const channels = new Set([FAKE_CHANNEL, ...(options.channels ?? [])]);
  const messages: FakeMessage[] = [];
  const ephemerals: FakeSlack['ephemerals'] = [];
  const calls: FakeSlack['calls'] = [];
  const users = new Map<string, FakeUser>();
  const failures = new Map<string, FakeFailure>();
  let seq = 0;

  const answer = (res: ServerResponse, method: string, status: number, body: Record<string, unknown>) => {
    calls.push({ method, status, ...(typeof body['error'] === 'string' ? { error: body['error'] } : {}) });
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      ...(status === 429 ? { 'retry-after': '1' } : {}),
    });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req, res) => {
    void (async () => {
      const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0] ?? '';
      const body = await bodyOf(req);
      const failure = failures.get(method) ?? failures.get('*');
      if (failure) {
        if ('status' in failure)
          return answer(res, method, failure.status, { ok: false, error: 'fake_outage' });
        return answer(res, method, 200, { ok: false, error: failure.error });
      }
      if (req.headers.authorization !== `Bearer ${token}`)
        return answer(res, method, 200, { ok: false, error: 'invalid_auth' });
      switch (method) {
        case 'chat.postMessage': {
          const channel = String(body['channel']);
          if (!channels.has(channel))
            return answer(res, method, 200, { ok: false, error: 'channel_not_found' });
          seq += 1;
          const ts = `1700000000.${String(seq).padStart(6, '0')}`;
          const blocks = blocksOf(body['blocks']);
          const text = String(body['text'] ?? '');
          messages.push({ channel, ts, text, blocks, history: [{ text, blocks }] });
          return answer(res, method, 200, { ok: true, channel, ts });
        }
        case 'chat.update': {
          const found = messages.find((m) => m.channel === body['channel'] && m.ts === body['ts']);
          if (!found) return answer(res, method, 200, { ok: false, error: 'message_not_found' });
          found.text = String(body['text'] ?? '');
          found.blocks = blocksOf(body['blocks']);
          found.history.push({ text: found.text, blocks: found.blocks });
          return answer(res, method, 200, { ok: true, channel: found.channel, ts: found.ts });
        }
        case 'chat.postEphemeral': {
          ephemerals.push({
            channel: String(body['channel']),
            user: String(body['user']),
            text: String(body['text']),
          });
          return answer(res, method, 200, { ok: true, message_ts: `1700000001.${ephemerals.length}` });
        }
        case 'users.info': {
          const id = String(body['user'] ?? '');
          const user = users.get(id);
          if (!user) return answer(res, method, 200, { ok: false, error: 'user_not_found' });
          return answer(res, method, 200, {
            ok: true,
            user: {
              id,
              deleted: user.deleted ?? false,
              is_bot: false,
              is_email_confirmed: user.confirmed ?? true,
              profile: user.email ? { email: user.email } : {},
            },
          });
        }
        default:
          return answer(res, method, 200, { ok: false, error: 'unknown_method' });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    messages,
    ephemerals,
    calls,
    users,
    fail: (method, failure) => failures.set(method, failure),
    recover: () => failures.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The value of a card's button (`countersign_approve`, `countersign_decline`), or undefined. */
export function buttonValue(
  message: { blocks: Record<string, unknown>[] },
  actionId: string,
): string | undefined {
  for (const block of message.blocks) {
    if (block['type'] !== 'actions') continue;
    for (const element of block['elements'] as Record<string, unknown>[])
      if (element['action_id'] === actionId) return element['value'] as string | undefined;
  }
  return undefined;
}

/** The plain text of a card (every text of every block), for assertions. */
export function cardText(message: { blocks: Record<string, unknown>[] }): string {
  return JSON.stringify(message.blocks);
}

/** A block_actions payload of one click, as Slack sends it. */
export function clickPayload(input: {
  readonly user: string;
  readonly actionId: string;
  readonly value: string;
  readonly channel?: string;
  readonly ts?: string;
}): Record<string, unknown> {
  return {
    type: 'block_actions',
    // Unique per click, as Slack's are: two clicks are never one signed request.
    trigger_id: `${Date.now()}.${randomBytes(6).toString('hex')}`,
    user: { id: input.user, username: input.user.toLowerCase() },
    team: { id: 'T0TEAM' },
    channel: { id: input.channel ?? FAKE_CHANNEL },
    container: { type: 'message', channel_id: input.channel ?? FAKE_CHANNEL, message_ts: input.ts ?? '0' },
    actions: [{ type: 'button', action_id: input.actionId, value: input.value, action_ts: '1700000002.000' }],
  };
}

/** The form body and Slack's signature headers of a payload (`v0` HMAC over `v0:{ts}:{body}`). */
export function signed(
  payload: Record<string, unknown>,
  secret: string,
  timestampS = Math.floor(Date.now() / 1000),
): { body: string; headers: Record<string, string> } {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestampS}:${body}`).digest('hex')}`;
  return {
    body,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(timestampS),
      'x-slack-signature': signature,
    },
  };
}

/**
 * Points `countersign serve` (started after this) at `slack` through its environment variables,
 * signing with `signingSecret`; the function it returns puts the variables back as they were.
 */
export function slackEnvFor(slack: FakeSlack, token: string, signingSecret: string): () => void {
  const env: Record<string, string> = {
    COUNTERSIGN_SLACK_BOT_TOKEN: token,
    COUNTERSIGN_SLACK_SIGNING_SECRET: signingSecret,
    COUNTERSIGN_SLACK_CHANNEL: FAKE_CHANNEL,
    COUNTERSIGN_SLACK_API_URL: slack.apiUrl,
  };
  const saved = new Map(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  return () => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
