import type { Context, Hono } from 'hono';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Engine } from '../../engine/create-engine.js';
import type { Clock, Logger } from '../../engine/engine-context.js';
import type { AppEnv } from '../app-env.js';
import { expectedOrigin } from '../auth/cross-site.js';
import type { OidcRelyingParty } from '../auth/oidc.js';
import { writeSessionCookie } from '../auth/session-cookie.js';
import type { ConsoleSession, PrincipalDirectory } from '../directory/principal-directory.js';
import { HttpProblem } from '../../http/http-problem.js';
import { loginToken } from './login-token.js';
import { oidcCookieKey, takeOidcCookie, writeOidcCookie } from './oidc-cookie.js';
import { loginPage, movingOnPage } from './pages/login-page.js';

/** What the single sign-on routes are wired from: the console's own helpers among them. */
export interface SsoRouteDependencies {
  readonly directory: PrincipalDirectory;
  /** Withdraws approvals an operator who lost powers gave to pending proposals. */
  readonly engine: Pick<Engine, 'proposals'>;
  readonly publicUrl: URL | undefined;
  readonly clock: Clock;
  readonly oidc: OidcRelyingParty | undefined;
  readonly logger: Logger;
  readonly sessionMaxAgeSeconds: number;
  /** What the login page offers. */
  readonly signInOptions: { readonly sso: boolean; readonly password: boolean };
  readonly sessionOf: (c: Context<AppEnv>) => { session: ConsoleSession; sessionId: string } | undefined;
  readonly page: (c: Context<AppEnv>, body: HtmlEscapedString, status?: 200 | 401 | 403 | 502) => Response;
  readonly nonce: (c: Context<AppEnv>) => string;
  /** The console's check of a landing path (same origin, a plain path). */
  readonly safeNext: (value: string | undefined) => string;
}

/**
 * Mounts `GET /login/oidc` (starts single sign-on) and `GET /login/oidc/callback` (completes it)
 * on the console app; both answer 404 when single sign-on is not configured.
 */
export function mountSso(app: Hono<AppEnv>, deps: SsoRouteDependencies): void {
  const { directory, publicUrl, clock, oidc, logger, sessionMaxAgeSeconds, signInOptions } = deps;
  const { sessionOf, page, nonce, safeNext } = deps;

  const callbackPath = '/login/oidc/callback';
  // Once per app instance: derived from the client secret, else random (see oidcCookieKey).
  const transactionKey = oidcCookieKey(oidc?.config.clientSecret);
  const ssoRefused = (
    c: Context<AppEnv>,
    reason: 'forbidden' | 'invalid_state' | 'sso_failed',
    error: string,
    detail: Record<string, unknown>,
    status: 401 | 403 | 502 = 403,
  ) => {
    logger.warn({ reason, ...detail }, 'sso sign-in refused');
    return page(
      c,
      loginPage({ nonce: nonce(c), csrf: loginToken(c, publicUrl), ...signInOptions, error, reason }),
      status,
    );
  };

  // Starts single sign-on: a new transaction (state, nonce, PKCE verifier) in this browser's
  // cookie, then off to the provider.
  app.get('/login/oidc', async (c) => {
    if (!oidc) throw new HttpProblem(404, 'not_found', 'single sign-on is not configured');
    const redirectUri = `${expectedOrigin(c, publicUrl)}${callbackPath}`;
    let started: Awaited<ReturnType<OidcRelyingParty['start']>>;
    try {
      started = await oidc.start(redirectUri, safeNext(c.req.query('next')), clock.now());
    } catch (error) {
      return ssoRefused(
        c,
        'sso_failed',
        'The identity provider cannot be reached. Try again later.',
        { error: error instanceof Error ? error.name : 'unknown' },
        502,
      );
    }
    writeOidcCookie(c, publicUrl, transactionKey, started.transaction);
    c.header('Cache-Control', 'no-store');
    return c.redirect(started.url.href, 302);
  });

  // The provider sends the browser back here. The transaction cookie is cleared whatever the
  // outcome; a missing, malformed, tampered or expired one is refused alike (the log says which);
  // openid-client checks state, redeems the code with the PKCE verifier and validates
  // the ID token (issuer, audience, signature, expiry, nonce); the claims then name a tenant the
  // directory knows and at least one console role, or nobody signs in.
  app.get(callbackPath, async (c) => {
    if (!oidc) throw new HttpProblem(404, 'not_found', 'single sign-on is not configured');
    const taken = takeOidcCookie(c, publicUrl, transactionKey, clock.now());
    if (taken.kind === 'refused')
      return ssoRefused(
        c,
        'invalid_state',
        'This sign-in expired or was started in another browser. Sign in again.',
        { detail: 'no usable sign-in transaction in this browser', transaction: taken.reason },
      );
    const { transaction } = taken;
    const origin = expectedOrigin(c, publicUrl);
    const callbackUrl = new URL(`${callbackPath}${new URL(c.req.url).search}`, origin);
    const result = await oidc.finish(callbackUrl, `${origin}${callbackPath}`, transaction);
    if (result.kind === 'refused')
      return ssoRefused(
        c,
        result.reason,
        result.reason === 'invalid_state'
          ? 'This sign-in does not belong to this browser. Sign in again.'
          : 'The identity provider did not confirm this sign-in.',
        { detail: result.detail },
        result.reason === 'invalid_state' ? 403 : 401,
      );
    const { identity } = result;
    const who = { issuer: identity.issuer, subject: identity.subject, tenant: identity.tenant ?? null };
    // The provider no longer gives this identity a way in: an operator it made loses every role and
    // session before the refusal, so a session opened earlier stops approving now, not at its end.
    const withdraw = async () => {
      const removed = await directory.removeProviderRoles({
        issuer: identity.issuer,
        subject: identity.subject,
      });
      if (removed.kind === 'removed') {
        await deps.engine.proposals.withdrawLapsedApprovals({ tenant: removed.tenant, by: 'system:sso' });
        logger.warn(
          {
            ...who,
            operator: `user:${removed.email}`,
            sessionsEnded: removed.sessionsEnded,
            audited: removed.audited,
          },
          'sso roles removed',
        );
      }
    };
    if (identity.tenant === undefined) {
      await withdraw();
      return ssoRefused(c, 'forbidden', 'Your account names no tenant of this console.', {
        ...who,
        detail: 'no tenant claim',
      });
    }
    if (identity.roles.length === 0) {
      await withdraw();
      return ssoRefused(c, 'forbidden', 'Your account has no role in this console.', {
        ...who,
        detail: 'no console role in the claims',
      });
    }
    const signedIn = await directory.signInWithProvider({
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
      tenant: identity.tenant,
      roles: identity.roles,
      previousSessionId: sessionOf(c)?.sessionId,
      idToken: result.idToken,
    });
    if (signedIn.kind === 'unknown_tenant' || signedIn.kind === 'invalid_roles') await withdraw();
    if (signedIn.kind !== 'signed_in') {
      const errors = {
        unknown_tenant: 'Your account names a tenant this console does not know.',
        email_taken: 'Your email belongs to another operator of this console.',
        email_confusable: 'Your email looks like another operator’s of this console (look-alike letters).',
        email_invisible: 'Your email holds invisible or format characters.',
        disabled: 'Your operator account is disabled.',
        invalid_roles: 'Your account has no role in this console.',
      } as const;
      return ssoRefused(c, 'forbidden', errors[signedIn.kind], { ...who, detail: signedIn.kind });
    }
    logger.info(
      { ...who, operator: signedIn.session.actor.id, provisioned: signedIn.provisioned },
      'sso sign-in',
    );
    // The claims may have taken a role away (approver to viewer): approvals it gave stop counting.
    if (!signedIn.provisioned)
      await deps.engine.proposals.withdrawLapsedApprovals({
        tenant: signedIn.session.actor.tenant,
        by: 'system:sso',
      });
    writeSessionCookie(c, publicUrl, signedIn.sessionId, sessionMaxAgeSeconds);
    // A page, not a redirect: the provider's cross-site redirect started this navigation, and the
    // SameSite=Strict session cookie goes only with a navigation this origin starts.
    return page(
      c,
      movingOnPage({
        nonce: nonce(c),
        title: 'Signed in',
        href: safeNext(transaction.next),
        link: 'Continue to the console',
      }),
    );
  });
}
