import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { OidcTransaction } from '../../src/server/auth/oidc.js';
import { openSealed, type SealingKey, sealValue } from '../../src/server/auth/sealed-value.js';
import {
  oidcCookieKey,
  type TakenTransaction,
  takeOidcCookie,
  writeOidcCookie,
} from '../../src/server/console/oidc-cookie.js';

// http://localhost is a secure context: the cookie is `__Host-countersign_oidc`.
const COOKIE = '__Host-countersign_oidc';
const AT = 1_700_000_000_000;
const TRANSACTION: OidcTransaction = {
  state: 's'.repeat(43),
  nonce: 'n'.repeat(43),
  verifier: 'v'.repeat(43),
  next: '/history',
  at: AT,
};

function appWith(key: SealingKey): Hono {
  const app = new Hono();
  app.get('/start', (c) => {
    writeOidcCookie(c, undefined, key, TRANSACTION);
    return c.body(null, 204);
  });
  app.get('/callback', (c) => c.json(takeOidcCookie(c, undefined, key, Number(c.req.query('now') ?? AT))));
  return app;
}

async function written(app: Hono): Promise<string> {
  const res = await app.request('/start');
  const cookie = res.headers.get('set-cookie') ?? '';
  expect(cookie).toMatch(
    /^__Host-countersign_oidc=[^;]+; Max-Age=600; Path=\/; HttpOnly; Secure; SameSite=Lax/,
  );
  return cookie.slice(COOKIE.length + 1, cookie.indexOf(';'));
}

async function taken(app: Hono, value: string | undefined, now = AT) {
  const res = await app.request(`/callback?now=${now}`, {
    headers: value === undefined ? {} : { cookie: `${COOKIE}=${value}` },
  });
  return {
    body: (await res.json()) as TakenTransaction,
    cleared: /Max-Age=0/.test(res.headers.get('set-cookie') ?? ''),
  };
}

/** `value` with the character at `index` replaced by another base64url character. */
function flipped(value: string, index: number): string {
  const i = index < 0 ? value.length + index : index;
  return `${value.slice(0, i)}${value[i] === 'A' ? 'B' : 'A'}${value.slice(i + 1)}`;
}

describe('the sealed OIDC transaction cookie', () => {
  const key = oidcCookieKey('client-secret-0123456789abcdef0123456789');

  it('round trip: the transaction comes back once, and the cookie is cleared', async () => {
    const app = appWith(key);
    const value = await written(app);
    const [payload, mac] = value.split('.');
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'))).toEqual(TRANSACTION);
    expect(mac).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await taken(app, value, AT + 599_000)).toEqual({
      body: { kind: 'taken', transaction: TRANSACTION },
      cleared: true,
    });
  });

  it('refuses a flipped character in the payload or in the MAC: tampered, cleared', async () => {
    const app = appWith(key);
    const value = await written(app);
    const dot = value.indexOf('.');
    for (const index of [0, dot - 1, dot + 1, -1]) {
      const changed = flipped(value, index);
      expect(changed).not.toBe(value);
      expect(await taken(app, changed), String(index)).toEqual({
        body: { kind: 'refused', reason: 'tampered' },
        cleared: true,
      });
    }
  });

  it('refuses a transaction re-encoded with another landing path, without the key: tampered', async () => {
    const app = appWith(key);
    const [, mac] = (await written(app)).split('.');
    const forged = Buffer.from(JSON.stringify({ ...TRANSACTION, next: '/grants' })).toString('base64url');
    expect((await taken(app, `${forged}.${mac}`)).body).toEqual({ kind: 'refused', reason: 'tampered' });
    expect((await taken(app, forged)).body).toEqual({ kind: 'refused', reason: 'malformed' });
  });

  it('refuses a value sealed under the same key for another cookie name: tampered', async () => {
    const app = appWith(key);
    const [payload] = (await written(app)).split('.');
    for (const purpose of ['countersign_flash', 'countersign_session', '__Host-countersign_oidc'])
      expect((await taken(app, sealValue(key, purpose, payload!))).body, purpose).toEqual({
        kind: 'refused',
        reason: 'tampered',
      });
    expect((await taken(app, sealValue(key, 'countersign_oidc', payload!))).body.kind).toBe('taken');
  });

  it('refuses a transaction older than ten minutes, or dated more than a minute ahead: expired', async () => {
    const app = appWith(key);
    const value = await written(app);
    expect(await taken(app, value, AT + 600_001)).toEqual({
      body: { kind: 'refused', reason: 'expired' },
      cleared: true,
    });
    expect((await taken(app, value, AT - 60_001)).body).toEqual({ kind: 'refused', reason: 'expired' });
    expect((await taken(app, value, AT - 60_000)).body.kind).toBe('taken');
  });

  it('refuses an over-long, MAC-less or non-JSON value without throwing: malformed', async () => {
    const app = appWith(key);
    const value = await written(app);
    const [, mac] = value.split('.');
    const long = `${'A'.repeat(2100)}.${mac}`;
    expect(await taken(app, long)).toEqual({ body: { kind: 'refused', reason: 'malformed' }, cleared: true });
    // Over-long even when correctly sealed: the length is checked before any MAC is computed.
    expect((await taken(app, sealValue(key, 'countersign_oidc', 'A'.repeat(2000)))).body).toEqual({
      kind: 'refused',
      reason: 'malformed',
    });
    for (const payload of ['bm90IGpzb24', Buffer.from('[1]').toString('base64url'), ''])
      expect((await taken(app, sealValue(key, 'countersign_oidc', payload))).body, payload).toEqual({
        kind: 'refused',
        reason: 'malformed',
      });
    const partial = Buffer.from(JSON.stringify({ ...TRANSACTION, at: String(AT) })).toString('base64url');
    expect((await taken(app, sealValue(key, 'countersign_oidc', partial))).body).toEqual({
      kind: 'refused',
      reason: 'malformed',
    });
  });

  it('answers missing when the browser sent none, and clears nothing', async () => {
    expect(await taken(appWith(key), undefined)).toEqual({
      body: { kind: 'refused', reason: 'missing' },
      cleared: false,
    });
  });

  it('the key: one client secret, one key (instances share it); without a secret, a new key per instance', async () => {
    const value = await written(appWith(key));
    const sameSecret = oidcCookieKey('client-secret-0123456789abcdef0123456789');
    expect((await taken(appWith(sameSecret), value)).body.kind).toBe('taken');
    for (const other of [oidcCookieKey('another-secret'), oidcCookieKey(undefined), oidcCookieKey('')])
      expect((await taken(appWith(other), value)).body).toEqual({ kind: 'refused', reason: 'tampered' });
    const publicClient = oidcCookieKey(undefined);
    expect((await taken(appWith(publicClient), await written(appWith(publicClient)))).body.kind).toBe(
      'taken',
    );
    expect(Buffer.from(oidcCookieKey(undefined)).equals(Buffer.from(oidcCookieKey(undefined)))).toBe(false);
  });
});

describe('sealed values', () => {
  const key = new Uint8Array(32).fill(7);

  it('open under the same key and purpose only', () => {
    const sealed = sealValue(key, 'purpose', 'payload');
    expect(openSealed(key, 'purpose', sealed, 100)).toEqual({ kind: 'opened', payload: 'payload' });
    expect(openSealed(key, 'other', sealed, 100)).toEqual({ kind: 'refused', reason: 'tampered' });
    expect(openSealed(new Uint8Array(32), 'purpose', sealed, 100)).toEqual({
      kind: 'refused',
      reason: 'tampered',
    });
    expect(openSealed(key, 'purpose', sealed, sealed.length - 1)).toEqual({
      kind: 'refused',
      reason: 'malformed',
    });
  });

  it('a purpose and payload never read as another pair that joins to the same text', () => {
    const mac = sealValue(key, 'a:b', 'c').split('.')[1];
    expect(openSealed(key, 'a', `b:c.${mac}`, 100)).toEqual({ kind: 'refused', reason: 'tampered' });
  });

  it('a payload may hold dots: the MAC is after the last one', () => {
    const sealed = sealValue(key, 'p', 'x.y');
    expect(openSealed(key, 'p', sealed, 100)).toEqual({ kind: 'opened', payload: 'x.y' });
    expect(openSealed(key, 'p', `${sealed}é`, 100)).toEqual({ kind: 'refused', reason: 'tampered' });
  });
});
