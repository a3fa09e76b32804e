import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

// The key comes from the session id, which only the browser's HttpOnly cookie holds (the store
// keeps its SHA-256): whoever reads the sessions table cannot open what is sealed for a session.
function keyFor(sessionId: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', sessionId, '', `countersign session-sealed:${purpose}`, 32));
}

/**
 * Encrypts a value for one session and purpose (AES-256-GCM, a key derived from the session id):
 * base64url of IV, ciphertext and tag. Only a request that carries the session's cookie opens it.
 */
export function sealForSession(sessionId: string, purpose: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyFor(sessionId, purpose), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** Opens a value sealed by {@link sealForSession}; undefined for another session, purpose or a changed value. */
export function openForSession(sessionId: string, purpose: string, sealed: string): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(sessionId, purpose), bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const body = bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
