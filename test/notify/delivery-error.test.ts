import { describe, expect, it } from 'vitest';
import { type DeliveryError, deliveryErrorText, networkFailure } from '../../src/notify/delivery-error.js';

/** An error as a library throws it: a message, and the fields it adds. */
function thrown(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

const SECRET_URL = 'https://hooks.internal.corp/in?token=sk_live_51HxQ7';

describe('deliveryErrorText', () => {
  it('is the code, and for a status its number', () => {
    expect(deliveryErrorText({ code: 'http_status', status: 503 })).toBe('http_status 503');
    expect(deliveryErrorText({ code: 'smtp_status', status: 550 })).toBe('smtp_status 550');
    expect(deliveryErrorText({ code: 'timeout' })).toBe('timeout');
    expect(deliveryErrorText({ code: 'no_recipients' })).toBe('no_recipients');
  });

  it('stores sender_failed for what is not in the list (plain JavaScript ignores the types)', () => {
    const untyped = (value: unknown) => deliveryErrorText(value as DeliveryError);
    expect(untyped(`connect ECONNREFUSED ${SECRET_URL}`)).toBe('sender_failed');
    expect(untyped({ code: SECRET_URL })).toBe('sender_failed');
    expect(untyped({ code: 'constructor' })).toBe('sender_failed');
    expect(untyped(null)).toBe('sender_failed');
    expect(untyped(undefined)).toBe('sender_failed');
    // A status that is not a number of three digits is left out, never quoted.
    expect(untyped({ code: 'http_status', status: SECRET_URL })).toBe('http_status');
    expect(untyped({ code: 'http_status', status: 1e9 })).toBe('http_status');
    expect(untyped({ code: 'timeout', status: 503 })).toBe('timeout');
  });
});

describe('networkFailure reads codes, never messages', () => {
  const cases: readonly [string, unknown, string][] = [
    ['a fetch timeout', new DOMException(`timed out ${SECRET_URL}`, 'TimeoutError'), 'timeout'],
    ['an abort', new DOMException('aborted', 'AbortError'), 'timeout'],
    [
      'fetch failed, caused by a refused connection',
      thrown('fetch failed', {
        cause: thrown(`connect ECONNREFUSED ${SECRET_URL}`, { code: 'ECONNREFUSED' }),
      }),
      'connection_refused',
    ],
    [
      'an unknown host',
      thrown('fetch failed', { cause: thrown('getaddrinfo', { code: 'ENOTFOUND' }) }),
      'dns_failure',
    ],
    ['a resolver that is down', thrown('x', { code: 'EAI_AGAIN' }), 'dns_failure'],
    ['a bad certificate', thrown('x', { cause: thrown('x', { code: 'CERT_HAS_EXPIRED' }) }), 'tls_error'],
    ['a self-signed certificate', thrown('x', { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), 'tls_error'],
    ['a reset connection', thrown('x', { cause: thrown('x', { code: 'ECONNRESET' }) }), 'connection_reset'],
    ['not HTTP', thrown('x', { cause: thrown('x', { code: 'HPE_INVALID_CONSTANT' }) }), 'invalid_response'],
    [
      'a connect timeout',
      thrown('x', { cause: thrown('x', { code: 'UND_ERR_CONNECT_TIMEOUT' }) }),
      'timeout',
    ],
    ['no code at all', new Error(SECRET_URL), 'network_error'],
    ['a code we do not know', thrown(SECRET_URL, { code: 'EHOSTUNREACH' }), 'network_error'],
    ['not an error', SECRET_URL, 'network_error'],
    // nodemailer keeps the system code in originalCode and puts its own in code.
    [
      'a mail server that is down',
      thrown(`connect ECONNREFUSED ${SECRET_URL}`, { code: 'ESOCKET', originalCode: 'ECONNREFUSED' }),
      'connection_refused',
    ],
    [
      'refused credentials',
      thrown('Invalid login: 535 bad', { code: 'EAUTH', responseCode: 535 }),
      'auth_failed',
    ],
    [
      'a rejected recipient',
      thrown('Recipient command failed: 550 <ceo@internal.corp> unknown', {
        code: 'EENVELOPE',
        responseCode: 550,
      }),
      'smtp_status 550',
    ],
    [
      'an SMTP protocol error',
      thrown('Invalid greeting. response=x', { code: 'EPROTOCOL' }),
      'invalid_response',
    ],
    ['an SMTP timeout', thrown('Timeout', { code: 'ETIMEDOUT' }), 'timeout'],
    ['STARTTLS failing', thrown('Error initiating TLS', { code: 'ETLS' }), 'tls_error'],
  ];
  for (const [what, error, text] of cases)
    it(`${what}: ${text}`, () => {
      expect(deliveryErrorText(networkFailure(error))).toBe(text);
    });

  it('a cause chain that loops ends', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = a;
    expect(networkFailure(a)).toEqual({ code: 'network_error' });
  });
});
