import { createHash, randomBytes } from 'node:crypto';

/**
 * What a secret stands for: a bearer token (an agent's proposals or an operator's decisions), a
 * console session id, or a trusted-device id (a browser that signed an operator in before).
 */
export type SecretKind = 'agent' | 'operator' | 'session' | 'device';

const PREFIX: Readonly<Record<SecretKind, string>> = {
  agent: 'cs_agent_',
  operator: 'cs_op_',
  session: 'cs_sess_',
  device: 'cs_dev_',
};

/** A new random secret (256 bits, base64url) with a prefix that says what it is, e.g. `cs_agent_…`. */
export function newSecret(kind: SecretKind): string {
  return `${PREFIX[kind]}${randomBytes(32).toString('base64url')}`;
}

/**
 * The SHA-256 (hex) of a secret under a purpose label: what the directory stores instead of the
 * secret itself. Different purposes of one secret never produce the same value.
 */
export function secretHash(purpose: 'token' | 'session' | 'csrf' | 'device', secret: string): string {
  return createHash('sha256').update(`countersign:${purpose}\0${secret}`).digest('hex');
}

/** A secret of plausible shape: guards the database from arbitrary input before hashing. */
export function looksLikeSecret(value: string): boolean {
  return /^cs_(agent|op|sess|dev)_[A-Za-z0-9_-]{43}$/.test(value);
}
