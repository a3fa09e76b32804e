import * as client from 'openid-client';
import { ConfigurationError } from '../../canonical/errors.js';

/** The claims of a verified ID token, as the identity provider sent them. */
export type OidcClaims = Readonly<Record<string, unknown>>;

/**
 * OpenID Connect single sign-on for the console (`authentication.oidc` of the serve config):
 * authorization code flow with PKCE, `state` and `nonce`, through openid-client (a certified
 * relying party), endpoints discovered from the issuer.
 *
 * @example
 * oidc: {
 *   issuer: 'https://acme.okta.com/oauth2/default',
 *   clientId: process.env.OIDC_CLIENT_ID,
 *   clientSecret: process.env.OIDC_CLIENT_SECRET,
 *   tenant: 'countersign_tenant',              // a claim name, or (claims) => tenant id
 *   roles: 'groups',                           // a claim name, or (claims) => role names
 * }
 */
export interface OidcConfig {
  /** The issuer URL; `https://`, or `http://` only on a loopback host (local development and tests). */
  readonly issuer: string;
  readonly clientId: string;
  /** The client secret (client_secret_basic); without it the client is public (PKCE only). */
  readonly clientSecret?: string;
  /** Scopes to request (default `openid email profile`; `openid` is always requested). */
  readonly scopes?: readonly string[];
  /** The claim naming the operator's tenant, or a function of the claims (default claim `tenant`). */
  readonly tenant?: string | ((claims: OidcClaims) => string | undefined);
  /** The claim listing the operator's roles (array or space/comma separated), or a function (default claim `roles`). */
  readonly roles?: string | ((claims: OidcClaims) => readonly string[] | undefined);
  /** The claim holding the operator's email, their console name (default `email`; Entra: `preferred_username`). */
  readonly emailClaim?: string;
  /**
   * Roles the console accepts from the identity provider (default `approver`, `admin`, `viewer`
   * and the approver roles); other roles are dropped, and a user left with none is refused.
   */
  readonly consoleRoles?: readonly string[];
  /**
   * Where the provider sends the browser after single sign-out (default `<console>/login`); it must
   * be registered with the provider as a post-logout redirect URI.
   */
  readonly postLogoutRedirectUri?: string;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** Checks an OIDC config at start: required fields, and `https://` unless the issuer is on loopback. */
export function checkOidcConfig(config: OidcConfig): OidcConfig {
  let issuer: URL;
  try {
    issuer = new URL(config.issuer);
  } catch {
    throw new ConfigurationError(`authentication.oidc.issuer: "${String(config.issuer)}" is not a URL`);
  }
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && LOOPBACK.test(issuer.hostname)))
    throw new ConfigurationError(
      `authentication.oidc.issuer: ${issuer.origin} must be https:// (http:// only on a loopback host)`,
    );
  if (typeof config.clientId !== 'string' || config.clientId === '')
    throw new ConfigurationError('authentication.oidc.clientId: required');
  if (config.clientSecret !== undefined && typeof config.clientSecret !== 'string')
    throw new ConfigurationError('authentication.oidc.clientSecret: a string');
  if (config.postLogoutRedirectUri !== undefined) {
    let back: URL | undefined;
    try {
      back = new URL(config.postLogoutRedirectUri);
    } catch {
      back = undefined;
    }
    if (!back || (back.protocol !== 'https:' && !(back.protocol === 'http:' && LOOPBACK.test(back.hostname))))
      throw new ConfigurationError(
        'authentication.oidc.postLogoutRedirectUri: an https:// URL (http:// only on a loopback host)',
      );
  }
  for (const key of ['tenant', 'roles'] as const) {
    const value = config[key];
    if (value !== undefined && typeof value !== 'string' && typeof value !== 'function')
      throw new ConfigurationError(`authentication.oidc.${key}: a claim name or a function of the claims`);
  }
  return config;
}

/** The OIDC settings of `countersign serve --demo`, from `COUNTERSIGN_OIDC_*`, or undefined without an issuer. */
export function oidcFromEnvironment(env: NodeJS.ProcessEnv): OidcConfig | undefined {
  const issuer = env['COUNTERSIGN_OIDC_ISSUER'];
  if (!issuer) return undefined;
  const secret = env['COUNTERSIGN_OIDC_CLIENT_SECRET'];
  return checkOidcConfig({
    issuer,
    clientId: env['COUNTERSIGN_OIDC_CLIENT_ID'] ?? '',
    ...(secret ? { clientSecret: secret } : {}),
    tenant: env['COUNTERSIGN_OIDC_TENANT_CLAIM'] || 'tenant',
    roles: env['COUNTERSIGN_OIDC_ROLES_CLAIM'] || 'roles',
  });
}

/** What the browser keeps between the redirect to the provider and the callback (one sign-in, used once). */
export interface OidcTransaction {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  /** The console path to land on after sign-in. */
  readonly next: string;
  readonly at: number;
}

/** Who the provider says signed in, mapped to the console's terms. */
export interface OidcIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly email: string;
  readonly tenant: string | undefined;
  readonly roles: readonly string[];
}

/**
 * The result of a callback: a verified identity with the raw ID token (kept, encrypted, with the
 * session for the logout's `id_token_hint`; never logged), or why not (never with a token in it).
 */
export type OidcCallbackResult =
  | { readonly kind: 'verified'; readonly identity: OidcIdentity; readonly idToken: string | undefined }
  | { readonly kind: 'refused'; readonly reason: 'invalid_state' | 'sso_failed'; readonly detail: string };

function listOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  return [];
}

/** The relying party: discovery (once, retried after a failure), the authorization URL, the callback, logout. */
export class OidcRelyingParty {
  readonly config: OidcConfig;
  readonly #consoleRoles: ReadonlySet<string>;
  #discovered: Promise<client.Configuration> | undefined;

  constructor(config: OidcConfig, approverRoles: readonly string[]) {
    this.config = checkOidcConfig(config);
    this.#consoleRoles = new Set(config.consoleRoles ?? ['approver', 'admin', 'viewer', ...approverRoles]);
  }

  /** The issuer's metadata and the client, discovered at first use. */
  async configuration(): Promise<client.Configuration> {
    if (!this.#discovered) {
      const { issuer, clientId, clientSecret } = this.config;
      const url = new URL(issuer);
      this.#discovered = client.discovery(
        url,
        clientId,
        undefined,
        clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret),
        url.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {},
      );
      this.#discovered.catch(() => {
        this.#discovered = undefined;
      });
    }
    return this.#discovered;
  }

  /** A new transaction and the provider's authorization URL for it. */
  async start(
    redirectUri: string,
    next: string,
    now: number,
  ): Promise<{ url: URL; transaction: OidcTransaction }> {
    const configuration = await this.configuration();
    const transaction: OidcTransaction = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      next,
      at: now,
    };
    const scopes = new Set(['openid', ...(this.config.scopes ?? ['email', 'profile'])]);
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: [...scopes].join(' '),
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(transaction.verifier),
      code_challenge_method: 'S256',
      state: transaction.state,
      nonce: transaction.nonce,
    });
    return { url, transaction };
  }

  /**
   * Completes a callback: the state must be this browser's, then openid-client redeems the code
   * (PKCE verifier) and validates the ID token (issuer, audience, signature, expiry, nonce).
   */
  async finish(
    callbackUrl: URL,
    redirectUri: string,
    transaction: OidcTransaction,
  ): Promise<OidcCallbackResult> {
    if (callbackUrl.searchParams.get('state') !== transaction.state)
      return { kind: 'refused', reason: 'invalid_state', detail: 'the state is not this browser’s' };
    let claims: OidcClaims;
    let idToken: string | undefined;
    try {
      const configuration = await this.configuration();
      const tokens = await client.authorizationCodeGrant(
        configuration,
        callbackUrl,
        {
          pkceCodeVerifier: transaction.verifier,
          expectedState: transaction.state,
          expectedNonce: transaction.nonce,
          idTokenExpected: true,
        },
        { redirect_uri: redirectUri },
      );
      const idClaims = tokens.claims();
      if (!idClaims) return { kind: 'refused', reason: 'sso_failed', detail: 'no ID token' };
      claims = idClaims as OidcClaims;
      idToken = tokens.id_token;
    } catch (error) {
      return { kind: 'refused', reason: 'sso_failed', detail: describeError(error) };
    }
    const emailClaim = this.config.emailClaim ?? 'email';
    const email = claims[emailClaim];
    // The standard email claim counts only when the provider vouches for it; a custom claim
    // (e.g. Entra's preferred_username) is the provider's own identifier.
    const unverified = emailClaim === 'email' && claims['email_verified'] !== true;
    if (typeof email !== 'string' || email === '' || unverified)
      return { kind: 'refused', reason: 'sso_failed', detail: 'the ID token has no verified email' };
    let tenant: unknown;
    let roles: unknown;
    try {
      tenant =
        typeof this.config.tenant === 'function'
          ? this.config.tenant(claims)
          : claims[this.config.tenant ?? 'tenant'];
      roles =
        typeof this.config.roles === 'function'
          ? (this.config.roles(claims) ?? [])
          : listOf(claims[this.config.roles ?? 'roles']);
    } catch (error) {
      return {
        kind: 'refused',
        reason: 'sso_failed',
        detail: `claim mapping threw: ${describeError(error)}`,
      };
    }
    return {
      kind: 'verified',
      idToken,
      identity: {
        issuer: String(claims['iss']),
        subject: String(claims['sub']),
        email,
        tenant: typeof tenant === 'string' && tenant !== '' ? tenant : undefined,
        roles: [...new Set(listOf(roles))].filter((r) => this.#consoleRoles.has(r)),
      },
    };
  }

  /** The issuer identifier the provider's metadata (and so every verified ID token) names. */
  async issuer(): Promise<string> {
    return (await this.configuration()).serverMetadata().issuer;
  }

  /**
   * The provider's end-session URL (RP-initiated logout), when it has one: with the sign-in's ID
   * token as `id_token_hint` (so the provider knows whose session ends and need not ask), and the
   * configured `postLogoutRedirectUri`, else `defaultRedirectUri`.
   */
  async logoutUrl(defaultRedirectUri: string, idTokenHint: string | undefined): Promise<URL | undefined> {
    const configuration = await this.configuration();
    if (!configuration.serverMetadata().end_session_endpoint) return undefined;
    return client.buildEndSessionUrl(configuration, {
      client_id: this.config.clientId,
      post_logout_redirect_uri: this.config.postLogoutRedirectUri ?? defaultRedirectUri,
      ...(idTokenHint !== undefined ? { id_token_hint: idTokenHint } : {}),
    });
  }
}

// Error names, codes and the provider's `error` only: never a token, a code or a response body.
function describeError(error: unknown): string {
  if (error instanceof client.ResponseBodyError) return `${error.error}: the token endpoint refused the code`;
  if (error instanceof client.AuthorizationResponseError) return `${error.error}: the provider refused`;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${typeof code === 'string' ? ` ${code}` : ''}: ${error.message.slice(0, 200)}`;
  }
  return 'unknown error';
}
