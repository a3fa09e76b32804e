import { parseStoredJson } from '../canonical/stored-json.js';
import { approvalLink, type ChannelSender, type PublicUrl } from './channel.js';
import { networkFailure } from './delivery-error.js';
import { signWebhook, webhookKey } from './webhook-signature.js';

/** Where webhooks go and how they are signed. */
export interface WebhookTarget {
  /** An http(s) URL receiving `POST` with the JSON payload. */
  readonly url: string;
  /** A Standard Webhooks secret, `whsec_` and base64. */
  readonly secret: string;
  /** A request taking longer fails (and is retried). Default 10 s. */
  readonly timeoutMs?: number;
}

/** Default request timeout of a webhook delivery. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * Delivers outbox rows as signed webhooks. `webhook-id` is the event id, the same on every retry
 * and after a restart, so receivers drop duplicates by it; the timestamp is the attempt's. Any 2xx
 * is delivered; another status (`http_status 503`), a redirect (`http_status 302`), a network
 * error or the timeout is a failure. The response body is never read: it stays out of `lastError`.
 */
export function webhookSender(
  target: WebhookTarget,
  options: { readonly publicUrl: PublicUrl; readonly now?: () => number },
): ChannelSender {
  const key = webhookKey(target.secret);
  const timeoutMs = target.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const now = options.now ?? Date.now;
  return async (delivery) => {
    const payload = parseStoredJson(delivery.payloadJson) as { data: Record<string, unknown> };
    const body = JSON.stringify({
      ...payload,
      data: { ...payload.data, approvalUrl: approvalLink(options.publicUrl, delivery.proposalId) },
    });
    const headers = signWebhook(key, {
      id: delivery.eventId,
      timestampSeconds: Math.floor(now() / 1000),
      body,
    });
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'countersign-webhooks', ...headers },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      return response.status >= 200 && response.status < 300
        ? { kind: 'delivered' }
        : { kind: 'failed', error: { code: 'http_status', status: response.status } };
    } catch (error) {
      return { kind: 'failed', error: networkFailure(error) };
    }
  };
}
