import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { ConsoleSession } from '../directory/principal-directory.js';
import { trusted, userText } from './render-text.js';
import { STYLESHEET } from './console-stylesheet.js';

/** What every console page is framed with. */
export interface LayoutInput {
  readonly title: string;
  /** The CSP nonce of this response: the only script runs under it. */
  readonly nonce: string;
  readonly session?: ConsoleSession | undefined;
  readonly current?: 'inbox' | 'history' | 'grants' | 'deliveries';
  readonly body: HtmlEscapedString;
  /** Extra elements of `<head>` (the SSO landing page's meta refresh). */
  readonly head?: HtmlEscapedString;
  /** Paths of same-origin scripts this page loads after its body (each under the CSP nonce). */
  readonly scripts?: readonly string[];
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

/** A full console page: header with navigation and the signed-in operator, then the body. */
export function layout(input: LayoutInput): HtmlEscapedString {
  const { session } = input;
  const nav = (name: NonNullable<LayoutInput['current']>, href: string, label: string) =>
    html`<a href="${href}"${input.current === name ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${input.title} · countersign</title>
<link rel="icon" href="${FAVICON}">
<link rel="stylesheet" href="${STYLESHEET.path}">
${input.head ?? ''}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="bar">
  <div class="bar-inner">
    <a class="brand" href="/"><span class="brand-mark" aria-hidden="true"></span>countersign</a>
    ${
      session
        ? html`<nav class="nav" aria-label="Main">${nav('inbox', '/', 'Inbox')}${nav('history', '/history', 'History')}${nav('grants', '/grants', 'Grants')}${session.actor.roles.includes('admin') ? nav('deliveries', '/deliveries', 'Deliveries') : ''}</nav>
    <div class="who">
      <span class="tenant" title="Tenant">${userText(session.actor.tenant)}</span>
      <span class="email">${userText(session.email)}</span>
      <span class="role">${roleOf(session)}</span>
      <form method="post" action="/logout"><input type="hidden" name="csrf" value="${session.csrfToken}"><button class="link-button" type="submit">Sign out</button></form>
    </div>`
        : ''
    }
  </div>
</header>
${input.body}
<script nonce="${input.nonce}">${trusted(SCRIPT)}</script>
${(input.scripts ?? []).map((src) => html`<script nonce="${input.nonce}" src="${src}" defer></script>`)}
</body>
</html>` as HtmlEscapedString;
}
