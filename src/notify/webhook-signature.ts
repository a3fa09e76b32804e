import { createHmac } from 'node:crypto';
import { ConfigurationError } from '../canonical/errors.js';

const PREFIX = 'whsec_';

/**
 * The key of a Standard Webhooks secret (`whsec_` and base64 of 24 to 64 random bytes).
 *
 * @throws {ConfigurationError} naming `field` when the secret is not of that form.
 */
export function webhookKey(secret: string, field = 'webhook secret'): Buffer {
  if (!secret.startsWith(PREFIX))
    throw new ConfigurationError(`${field}: must start with "${PREFIX}" (a Standard Webhooks secret)`);
  const encoded = secret.slice(PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  // Node's decoder skips characters it does not know: only a canonical encoding is accepted.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.toString('base64') !== encoded)
    throw new ConfigurationError(`${field}: the part after "${PREFIX}" must be base64`);
  if (key.length < 24 || key.length > 64)
    throw new ConfigurationError(`${field}: must encode 24 to 64 bytes (it has ${key.length})`);
  return key;
}

/**
 * The Standard Webhooks headers of one delivery: `webhook-id`, `webhook-timestamp` (unix seconds)
 * and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
 *
 * Signed here with node:crypto rather than the spec's reference package (`standardwebhooks`, which
 * the tests verify against): the package adds two pure-JS crypto dependencies for one HMAC that
 * node:crypto computes natively.
 */
export function signWebhook(
  key: Buffer,
  message: { readonly id: string; readonly timestampSeconds: number; readonly body: string },
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const signature = createHmac('sha256', key)
    .update(`${message.id}.${message.timestampSeconds}.${message.body}`)
    .digest('base64');
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(message.timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
