import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SLACK_SIGNATURE_WINDOW_S, SlackRequestVerifier } from '../../../src/server/slack/slack-signature.js';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const NOW_S = 1_700_000_000;

function sign(body: string, timestamp: number | string, secret = SECRET) {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

function verifier(nowS = NOW_S) {
  let now = nowS * 1000;
  const v = new SlackRequestVerifier(SECRET, () => now);
  return { v, setNow: (s: number) => (now = s * 1000) };
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('Slack request signing (v0)', () => {
  const body = 'payload=%7B%22type%22%3A%22block_actions%22%7D';

  it("verifies Slack's documented example signature", () => {
    // The example of api.slack.com/authentication/verifying-requests-from-slack.
    const example =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const v = new SlackRequestVerifier(SECRET, () => 1_531_420_618_000);
    expect(
      v.verify(
        {
          signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
          timestamp: '1531420618',
        },
        bytes(example),
      ),
    ).toEqual({ kind: 'verified' });
  });

  it('accepts a request signed with the secret within the window, once', () => {
    const { v } = verifier();
    const headers = { signature: sign(body, NOW_S - 30), timestamp: String(NOW_S - 30) };
    expect(v.verify(headers, bytes(body))).toEqual({ kind: 'verified' });
    expect(v.verify(headers, bytes(body))).toMatchObject({ kind: 'refused', reason: 'replayed' });
  });

  it('refuses another secret, a changed body, a missing or malformed header: unauthenticated', () => {
    const { v } = verifier();
    const ts = String(NOW_S);
    const refused = (signature: string | undefined, timestamp: string | undefined, text = body) =>
      v.verify({ signature, timestamp }, bytes(text));
    expect(refused(sign(body, ts, 'another-secret'), ts)).toMatchObject({ reason: 'unauthenticated' });
    expect(refused(sign(body, ts), ts, `${body}x`)).toMatchObject({ reason: 'unauthenticated' });
    expect(refused(undefined, ts)).toMatchObject({ reason: 'unauthenticated' });
    expect(refused(sign(body, ts), undefined)).toMatchObject({ reason: 'unauthenticated' });
    expect(refused(sign(body, ts).toUpperCase(), ts)).toMatchObject({ reason: 'unauthenticated' });
    expect(refused(sign(body, ts).slice(0, -2), ts)).toMatchObject({ reason: 'unauthenticated' });
    expect(refused(sign(body, '1e9'), '1e9')).toMatchObject({ reason: 'unauthenticated' });
    // The signature of another timestamp does not carry over.
    expect(refused(sign(body, NOW_S - 1), ts)).toMatchObject({ reason: 'unauthenticated' });
  });

  it('refuses a timestamp more than five minutes away, either way: unauthenticated', () => {
    const { v } = verifier();
    for (const at of [NOW_S - SLACK_SIGNATURE_WINDOW_S - 1, NOW_S + SLACK_SIGNATURE_WINDOW_S + 1]) {
      const result = v.verify({ signature: sign(body, at), timestamp: String(at) }, bytes(body));
      expect(result).toEqual({
        kind: 'refused',
        reason: 'unauthenticated',
        message: 'the request timestamp is outside the 5-minute window',
      });
    }
    const edge = NOW_S - SLACK_SIGNATURE_WINDOW_S;
    expect(v.verify({ signature: sign(body, edge), timestamp: String(edge) }, bytes(body))).toEqual({
      kind: 'verified',
    });
  });

  it('forgets a signature once its timestamp left the window (then the window refuses it anyway)', () => {
    const { v, setNow } = verifier();
    const headers = { signature: sign(body, NOW_S), timestamp: String(NOW_S) };
    expect(v.verify(headers, bytes(body)).kind).toBe('verified');
    setNow(NOW_S + SLACK_SIGNATURE_WINDOW_S + 120);
    expect(v.verify(headers, bytes(body))).toMatchObject({ reason: 'unauthenticated' });
  });
});
