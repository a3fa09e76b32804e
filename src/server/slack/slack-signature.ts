import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's window for a request's timestamp: five minutes either side of the server's clock. */
export const SLACK_SIGNATURE_WINDOW_S = 5 * 60;

/** Whether an interaction request came from Slack, once. */
export type SlackVerification =
  | { readonly kind: 'verified' }
  | {
      readonly kind: 'refused';
      /** `unauthenticated`: missing or wrong signature, or a timestamp outside the window; `replayed`: seen before. */
      readonly reason: 'unauthenticated' | 'replayed';
      readonly message: string;
    };

/**
 * Verifies Slack's request signing (v0): `X-Slack-Signature` is `v0=` and the hex HMAC-SHA-256,
 * keyed with the app's signing secret, of `v0:{X-Slack-Request-Timestamp}:{raw body}`; the
 * timestamp is within five minutes of now; the signatures are compared in constant time. A
 * signature accepted once is refused for as long as its timestamp stays in the window (`replayed`),
 * so a captured click cannot be sent again. The memory is this process's: servers behind one
 * Slack app each refuse what they saw.
 *
 * Written here with node:crypto rather than taken from `@slack/bolt`: Bolt's verifier comes with
 * its whole web framework (an Express receiver and its dependencies) for twenty lines, and it keeps
 * no memory of signatures seen, which the replay refusal needs.
 */
export class SlackRequestVerifier {
  readonly #secret: string;
  readonly #now: () => number;
  // Accepted signatures and when their timestamp leaves the window (seconds).
  readonly #seen = new Map<string, number>();
  #sweepAt = 0;

  constructor(signingSecret: string, now: () => number = Date.now) {
    this.#secret = signingSecret;
    this.#now = now;
  }

  /** Checks one request's headers against its raw body; a verified request is remembered. */
  verify(
    headers: { readonly signature: string | undefined; readonly timestamp: string | undefined },
    body: Uint8Array,
  ): SlackVerification {
    const refused = (reason: 'unauthenticated' | 'replayed', message: string): SlackVerification => ({
      kind: 'refused',
      reason,
      message,
    });
    const { signature, timestamp } = headers;
    if (signature === undefined || timestamp === undefined)
      return refused('unauthenticated', 'X-Slack-Signature and X-Slack-Request-Timestamp are required');
    if (!/^\d{1,12}$/.test(timestamp))
      return refused('unauthenticated', 'X-Slack-Request-Timestamp is not a time in seconds');
    const nowS = Math.floor(this.#now() / 1000);
    const at = Number(timestamp);
    if (Math.abs(nowS - at) > SLACK_SIGNATURE_WINDOW_S)
      return refused('unauthenticated', 'the request timestamp is outside the 5-minute window');
    const given = /^v0=([0-9a-f]{64})$/.exec(signature)?.[1];
    const expected = createHmac('sha256', this.#secret).update(`v0:${timestamp}:`).update(body).digest();
    if (given === undefined || !timingSafeEqual(Buffer.from(given, 'hex'), expected))
      return refused('unauthenticated', 'the request signature does not verify');
    this.#sweep(nowS);
    const seenUntil = this.#seen.get(given);
    if (seenUntil !== undefined && seenUntil >= nowS)
      return refused('replayed', 'this signed request was received before');
    this.#seen.set(given, at + SLACK_SIGNATURE_WINDOW_S);
    return { kind: 'verified' };
  }

  // Forgets signatures whose timestamp left the window (at most once a minute).
  #sweep(nowS: number): void {
    if (nowS < this.#sweepAt) return;
    this.#sweepAt = nowS + 60;
    for (const [signature, until] of this.#seen) if (until < nowS) this.#seen.delete(signature);
  }
}
