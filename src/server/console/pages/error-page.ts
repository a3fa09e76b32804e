import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { layout } from '../layout.js';
import { userText } from '../render-text.js';

/** A refused or failed console request: the reason code, a safe message, and the correlation id for a 500. */
export function errorPage(input: {
  readonly nonce: string;
  readonly session?: ConsoleSession | undefined;
  readonly status: number;
  readonly reason: string;
  readonly message: string;
  readonly correlationId?: string;
}): HtmlEscapedString {
  const title =
    input.status === 404 ? 'Not found' : input.status >= 500 ? 'Something went wrong' : 'Request refused';
  const body = html`<main id="main">
  <div class="page-head"><div><h1>${title}</h1></div></div>
  <div class="banner ${input.status >= 500 ? 'bad' : 'warn'}" role="alert">
    <strong>${userText(input.message)}</strong>
    Reason <code class="reason-code">${input.reason}</code>${input.correlationId ? html` · correlation id <code>${input.correlationId}</code>` : ''}
  </div>
  <p><a href="/">Back to the inbox</a></p>
</main>` as HtmlEscapedString;
  return layout({ title, nonce: input.nonce, session: input.session, body });
}
