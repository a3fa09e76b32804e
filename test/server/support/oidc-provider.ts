import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OidcConfig } from '../../../src/server/index.js';

/** A test user of the identity provider: its subject and the claims its ID token carries. */
export interface TestAccount {
  readonly email: string;
  readonly tenant?: string;
  readonly roles?: readonly string[];
  /** More claims of the ID token (e.g. `org`, `groups`, for other claim names). */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** A real OpenID provider (oidc-provider) on http://localhost (a site apart from the console's 127.0.0.1). */
export interface TestProvider {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Sets who exists, and their claims; `sub` is the key. */
  readonly accounts: Map<string, TestAccount>;
  /** The `authentication.oidc` config for a countersign server. */
  config(extra?: Partial<OidcConfig>): OidcConfig;
  /** Registers the console's callback and post-logout URLs (call before the first sign-in). */
  register(consoleUrl: string): Promise<void>;
  close(): Promise<void>;
}

// oidc-provider prints its quick-start notices (dev signing keys, in-memory adapter, Node 20)
// with console.warn/info; the test suite fails on stray console output, so those lines, and
// only those, are dropped while a provider lives.
let silenced = 0;
let original: { warn: typeof console.warn; info: typeof console.info } | undefined;
function silenceProvider(): () => void {
  if (silenced++ === 0) {
    original = { warn: console.warn, info: console.info };
    const filter =
      (write: (...args: unknown[]) => void) =>
      (...args: unknown[]) => {
        if (typeof args[0] === 'string' && args[0].includes('oidc-provider')) return;
        write(...args);
      };
    console.warn = filter(original.warn);
    console.info = filter(original.info);
  }
  return () => {
    if (--silenced === 0 && original) {
      console.warn = original.warn;
      console.info = original.info;
    }
  };
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return new URLSearchParams(body);
}

/** Starts the provider's listener now (so its issuer is known); the provider itself at `register`. */
export async function startTestProvider(): Promise<TestProvider> {
  const restore = silenceProvider();
  const { default: Provider } = await import('oidc-provider');
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((done) => server.listen(0, 'localhost', done));
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`;
  const clientId = 'countersign-console';
  const clientSecret = 'test-client-secret-0123456789abcdef';
  const accounts = new Map<string, TestAccount>();

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    config: (extra = {}) => ({ issuer, clientId, clientSecret, ...extra }),
    async register(consoleUrl) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [`${consoleUrl}/login/oidc/callback`],
            post_logout_redirect_uris: [`${consoleUrl}/login`],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        async findAccount(_ctx: unknown, sub: string) {
          const account = accounts.get(sub);
          if (!account) return undefined;
          return {
            accountId: sub,
            claims: async () => ({
              sub,
              email: account.email,
              email_verified: true,
              ...(account.tenant !== undefined ? { tenant: account.tenant } : {}),
              ...(account.roles !== undefined ? { roles: account.roles } : {}),
              ...(account.extra ?? {}),
            }),
          };
        },
        claims: {
          openid: ['sub'],
          email: ['email', 'email_verified'],
          profile: ['tenant', 'roles', 'org', 'groups'],
        },
        // Custom claims in the ID token itself, as Okta and Entra put group and role claims there.
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true } },
        interactions: {
          url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
        },
        // Consent is granted by the test setup: only the login prompt remains.
        async loadExistingGrant(ctx: {
          oidc: { client: { clientId: string }; session: { accountId?: string } };
        }) {
          const accountId = ctx.oidc.session.accountId;
          if (!accountId) return undefined;
          const grant = new provider.Grant({ accountId, clientId: ctx.oidc.client.clientId });
          grant.addOIDCScope('openid email profile');
          await grant.save();
          return grant;
        },
        cookies: { keys: ['test-provider-cookie-key-0123456789'] },
      });
      const callback = provider.callback();
      // The interaction: a login form with one field (the account's subject) and a Continue button.
      handler = (req, res) => {
        const match = /^\/interaction\/([\w-]+)$/.exec(req.url ?? '');
        if (!match) return callback(req, res);
        void (async () => {
          try {
            const details = await provider.interactionDetails(req, res);
            if (req.method === 'GET') {
              res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
              res.end(
                `<!doctype html><title>Test IdP</title><form method="post" action="/interaction/${details.uid}"><label for="login">Account</label><input id="login" name="login"><button type="submit">Continue</button></form>`,
              );
              return;
            }
            const login = (await formBody(req)).get('login') ?? '';
            await provider.interactionFinished(
              req,
              res,
              accounts.has(login)
                ? { login: { accountId: login } }
                : { error: 'access_denied', error_description: 'unknown account' },
              { mergeWithLastSubmission: false },
            );
          } catch {
            if (!res.headersSent) res.writeHead(400).end('interaction failed');
          }
        })();
      };
    },
    async close() {
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      restore();
    },
  };
}

/**
 * A browser stand-in across origins: one cookie jar per origin, redirects followed by hand.
 * `until` stops before fetching a URL (the console's callback, so a test can replay or tamper it).
 */
export class CookieBrowser {
  readonly jars = new Map<string, Map<string, string>>();

  jar(url: string | URL): Map<string, string> {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    return jar;
  }

  async request(
    url: string,
    init: { method?: 'GET' | 'POST'; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; location: string | undefined; html: string }> {
    const jar = this.jar(url);
    const headers: Record<string, string> = {
      cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
      ...(init.headers ?? {}),
    };
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers,
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    const location = response.headers.get('location');
    return {
      status: response.status,
      location: location === null ? undefined : new URL(location, url).href,
      html: await response.text(),
    };
  }

  /** GETs `url` and follows redirects until a page, or until the next URL satisfies `until`. */
  async follow(
    url: string,
    until: (next: URL) => boolean = () => false,
  ): Promise<{ url: string; status: number; html: string }> {
    let current = url;
    for (let hops = 0; hops < 20; hops++) {
      const response = await this.request(current);
      if (!response.location || response.status < 300 || response.status > 399)
        return { url: current, status: response.status, html: response.html };
      current = response.location;
      if (until(new URL(current))) return { url: current, status: 0, html: '' };
    }
    throw new Error('too many redirects');
  }
}

/**
 * Runs the provider's side of a sign-in for `account`: from the console's `GET /login/oidc` to the
 * provider's redirect back, returned unfetched (the callback URL with `code`, `state` and `iss`).
 */
export async function authorizeAt(
  browser: CookieBrowser,
  consoleUrl: string,
  provider: TestProvider,
  account: string,
): Promise<string> {
  const isCallback = (u: URL) => u.origin === consoleUrl && u.pathname === '/login/oidc/callback';
  const atLogin = await browser.follow(`${consoleUrl}/login/oidc`, isCallback);
  // The provider remembers this browser's earlier sign-in: straight back, no form.
  if (atLogin.status === 0) return atLogin.url;
  const form = /action="(\/interaction\/[\w-]+)"/.exec(atLogin.html);
  if (!form) throw new Error(`no provider login form at ${atLogin.url}: ${atLogin.status}`);
  const posted = await browser.request(`${provider.issuer}${form[1]}`, {
    method: 'POST',
    form: { login: account },
  });
  if (!posted.location) throw new Error(`the provider did not redirect: ${posted.status}`);
  if (isCallback(new URL(posted.location))) return posted.location;
  const back = await browser.follow(posted.location, isCallback);
  if (back.status !== 0) throw new Error(`the provider did not come back: ${back.status} at ${back.url}`);
  return back.url;
}
