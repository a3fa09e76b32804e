import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { ConfigurationError } from '../../canonical/errors.js';

// scrypt from node:crypto: memory-hard, no native add-on. N = 2^15, r = 8 is OWASP's floor for
// scrypt and costs about 32 MiB and tens of milliseconds per hash.
const COST = 2 ** 15;
const MIN_COST = 2 ** 10;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;
const MAX_COST = 2 ** 20;
const PREFIX = 'scrypt';

function derive(
  password: string,
  salt: Buffer,
  cost: number,
  blockSize: number,
  parallelism: number,
  length: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      length,
      { N: cost, r: blockSize, p: parallelism, maxmem: 256 * cost * blockSize + 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

/** What {@link hashPassword} may be asked to spend. */
export interface PasswordHashOptions {
  /**
   * scrypt's cost N: a power of two from 2^10 to 2^20. The default, 2^15, is OWASP's floor;
   * anything lower is for test suites that hash many passwords, never for a deployment.
   */
  readonly cost?: number;
}

/** The cost of {@link PasswordHashOptions}, checked; throws ConfigurationError when out of range. */
export function passwordCost(options: PasswordHashOptions = {}): number {
  const cost = options.cost ?? COST;
  if (!Number.isSafeInteger(cost) || cost < MIN_COST || cost > MAX_COST || (cost & (cost - 1)) !== 0)
    throw new ConfigurationError(`password cost: a power of two from 2^10 to 2^20, not ${String(cost)}`);
  return cost;
}

/**
 * Hashes a password with scrypt and a random 16-byte salt. The result is self-describing:
 * `scrypt$N$r$p$salt$hash` (base64url), so the cost can be raised later without losing old hashes.
 *
 * @example
 * const stored = await hashPassword('correct horse battery staple');
 * await verifyPassword('correct horse battery staple', stored); // true
 */
export async function hashPassword(password: string, options: PasswordHashOptions = {}): Promise<string> {
  const cost = passwordCost(options);
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost, BLOCK_SIZE, PARALLELISM, KEY_LENGTH);
  return [PREFIX, cost, BLOCK_SIZE, PARALLELISM, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** A hash of a random password at `cost`: verifying against it costs what verifying a real one does. */
export function dummyPasswordHash(cost: number): string {
  return `${PREFIX}$${cost}$${BLOCK_SIZE}$${PARALLELISM}$${'A'.repeat(22)}$${'A'.repeat(43)}`;
}

/**
 * Checks a password against a stored {@link hashPassword} result in constant time. A malformed
 * stored hash (or one whose cost parameters are out of bounds) never verifies.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== PREFIX) return false;
  const [cost, blockSize, parallelism] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const sane =
    Number.isSafeInteger(cost) &&
    cost > 1 &&
    cost <= MAX_COST &&
    (cost & (cost - 1)) === 0 &&
    blockSize >= 1 &&
    blockSize <= 32 &&
    parallelism >= 1 &&
    parallelism <= 4 &&
    salt.length >= 16 &&
    expected.length >= 16;
  if (!sane) return false;
  const actual = await derive(password, salt, cost, blockSize, parallelism, expected.length);
  return timingSafeEqual(actual, expected);
}
