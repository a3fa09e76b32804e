import { Layout, type Page, renderPage } from '../layout.js';

/** Props of {@link LoginPage}. */
export interface LoginPageProps {
  readonly nonce: string;
  readonly csrf: string;
  readonly email?: string;
  readonly error?: string;
  /** The refusal's reason code, shown beside `error`. */
  readonly reason?: string;
  readonly next?: string;
  /** Offer "Sign in with SSO" (default false). */
  readonly sso?: boolean;
  /** Offer the password form (default true). */
  readonly password?: boolean;
}

/**
 * The sign-in page: the password form (unless turned off) and "Sign in with SSO" (when single
 * sign-on is configured). `csrf` is the login form's double-submit token; `error` a fixed sentence.
 */
export function LoginPage(input: LoginPageProps) {
  const ssoHref = `/login/oidc${input.next ? `?next=${encodeURIComponent(input.next)}` : ''}`;
  return (
    <Layout title="Sign in" nonce={input.nonce}>
      <main id="main" class="login-wrap">
        <div class="login card">
          <h1>Sign in</h1>
          <p class="lead">Review and approve what your agents propose.</p>
          {input.error ? (
            <div class="banner bad" role="alert">
              <strong>{input.error}</strong>
              {input.reason ? (
                <>
                  {' '}
                  <span class="muted">
                    Reason <code class="reason-code">{input.reason}</code>
                  </span>
                </>
              ) : (
                ''
              )}
            </div>
          ) : (
            ''
          )}
          {input.sso ? (
            <p>
              <a class="button primary" id="sso" href={ssoHref}>
                Sign in with SSO
              </a>
            </p>
          ) : (
            ''
          )}
          {input.password === false ? (
            ''
          ) : (
            <form method="post" action="/login" novalidate>
              <input type="hidden" name="csrf" value={input.csrf} />
              {input.next ? <input type="hidden" name="next" value={input.next} /> : ''}
              <label for="email">Email</label>
              <input
                id="email"
                name="email"
                type="email"
                autocomplete="username"
                required
                value={input.email ?? ''}
                autofocus
              />
              <label for="password">Password</label>
              <input id="password" name="password" type="password" autocomplete="current-password" required />
              <button class="primary" type="submit">
                Sign in
              </button>
            </form>
          )}
        </div>
      </main>
    </Layout>
  );
}

/** The sign-in page as a document. */
export function loginPage(input: LoginPageProps): Page {
  return renderPage(<LoginPage {...input} />);
}

/** Props of {@link MovingOnPage}. */
export interface MovingOnPageProps {
  readonly nonce: string;
  readonly title: string;
  readonly href: string;
  readonly link: string;
}

/**
 * A page that moves on to `href` by itself (meta refresh, and a link for the rare browser that
 * does not follow it). Single sign-on answers with it where a redirect would not do: after the
 * callback, so the next request is a navigation this origin starts and carries the
 * SameSite=Strict session cookie; and after sign-out, since the CSP's `form-action 'self'`
 * forbids a form post to redirect to the provider. `href` is a path the console checked or the
 * provider's end-session URL.
 */
export function MovingOnPage(input: MovingOnPageProps) {
  return (
    <Layout
      title={input.title}
      nonce={input.nonce}
      head={<meta http-equiv="refresh" content={`0;url=${input.href}`} />}
    >
      <main id="main" class="login-wrap">
        <div class="login card">
          <h1>{input.title}</h1>
          <p>
            <a id="continue" href={input.href}>
              {input.link}
            </a>
          </p>
        </div>
      </main>
    </Layout>
  );
}

/** The moving-on page as a document. */
export function movingOnPage(input: MovingOnPageProps): Page {
  return renderPage(<MovingOnPage {...input} />);
}
