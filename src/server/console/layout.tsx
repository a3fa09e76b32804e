import type { Child } from 'hono/jsx';
import { type HtmlEscapedString, raw } from 'hono/utils/html';
import type { ConsoleSession } from '../directory/principal-directory.js';
import { currentConsoleSections } from './console-sections.js';
import { UserText } from './render-text.js';
import { STYLESHEET } from './console-stylesheet.js';

/** What every console page is framed with. */
export interface LayoutProps {
  readonly title: string;
  /** The CSP nonce of this response: the only script runs under it. */
  readonly nonce: string;
  readonly session?: ConsoleSession | undefined;
  readonly current?: 'inbox' | 'history' | 'grants' | 'deliveries' | 'operators' | 'routing' | 'slack';
  /** Extra elements of `<head>` (the SSO landing page's meta refresh). */
  readonly head?: Child;
  /** Paths of same-origin scripts this page loads after its body (each under the CSP nonce). */
  readonly scripts?: readonly string[];
  /** The page's `<main>`. */
  readonly children?: Child;
}

// The one script: disables a submit button once its form is sent, so a double click cannot send
// two decisions (the engine would refuse the second anyway).
const SCRIPT = `document.addEventListener('submit',function(e){var b=e.target.querySelector('button[type="submit"]');if(b){setTimeout(function(){b.disabled=true;b.setAttribute('aria-busy','true');},0);}});`;

const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#1f5fbf"/><path d="M9 16.5l4.5 4.5L23 11.5" stroke="#fff" stroke-width="3.2" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>',
)}`;

function roleOf(session: ConsoleSession): string {
  return session.actor.roles.join(', ') || 'no role';
}

type Section = NonNullable<LayoutProps['current']>;

function NavLink(props: {
  readonly name: Section;
  readonly current: Section | undefined;
  readonly href: string;
  readonly label: string;
}) {
  return (
    <a href={props.href} aria-current={props.current === props.name ? 'page' : undefined}>
      {props.label}
    </a>
  );
}

function Who({ session }: { readonly session: ConsoleSession }) {
  return (
    <div class="who">
      <span class="tenant" title="Tenant">
        <UserText text={session.actor.tenant} />
      </span>
      <span class="email">
        <UserText text={session.email} />
      </span>
      <span class="role">{roleOf(session)}</span>
      <form method="post" action="/logout">
        <input type="hidden" name="csrf" value={session.csrfToken} />
        <button class="link-button" type="submit">
          Sign out
        </button>
      </form>
    </div>
  );
}

/** A full console page: header with navigation and the signed-in operator, then the body. */
export function Layout(props: LayoutProps) {
  const { session, current } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title} · countersign</title>
        <link rel="icon" href={FAVICON} />
        <link rel="stylesheet" href={STYLESHEET.path} />
        {props.head}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="bar">
          <div class="bar-inner">
            <a class="brand" href="/">
              <span class="brand-mark" aria-hidden="true"></span>countersign
            </a>
            {session ? (
              <>
                <nav class="nav" aria-label="Main">
                  <NavLink name="inbox" current={current} href="/" label="Inbox" />
                  <NavLink name="history" current={current} href="/history" label="History" />
                  <NavLink name="grants" current={current} href="/grants" label="Grants" />
                  {session.actor.roles.includes('admin') ? (
                    <>
                      <NavLink name="deliveries" current={current} href="/deliveries" label="Deliveries" />
                      <NavLink name="operators" current={current} href="/operators" label="Operators" />
                      <NavLink name="routing" current={current} href="/routing" label="Routing" />
                      {currentConsoleSections().slack ? (
                        <NavLink name="slack" current={current} href="/slack" label="Slack" />
                      ) : (
                        ''
                      )}
                    </>
                  ) : (
                    ''
                  )}
                </nav>
                <Who session={session} />
              </>
            ) : (
              ''
            )}
          </div>
        </header>
        {props.children}
        {/* Our own constant script, not data: JSX would escape its quotes. */}
        <script nonce={props.nonce} dangerouslySetInnerHTML={{ __html: SCRIPT }} />
        {(props.scripts ?? []).map((src) => (
          <script nonce={props.nonce} src={src} defer />
        ))}
      </body>
    </html>
  );
}

/** A rendered console document, what a route hands to `c.html`. */
export type Page = HtmlEscapedString;

/** A rendered console document: the doctype (JSX has none), then the page component. */
export function renderPage(page: Child): Page {
  // JSX renders a node through toString; the doctype is our constant, not data.
  const document: unknown = (
    <>
      {raw('<!doctype html>\n')}
      {page}
    </>
  ).toString();
  // No console component is async, so the document renders at once; a promise here is a bug.
  if (typeof document !== 'string') throw new Error('a console page rendered asynchronously');
  return raw(document);
}
