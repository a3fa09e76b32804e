import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';

// Counts the proposals created since the page loaded (from GET /api/v1/events) and offers a
// reload; the inbox is complete without it. Text only through textContent: no markup is built
// from event data.
const JS = `(function () {
  'use strict';
  var region = document.getElementById('live-inbox');
  if (!region || typeof EventSource === 'undefined') return;
  var count = 0;
  var source = new EventSource('/api/v1/events');
  source.addEventListener('proposal.created', function () {
    count += 1;
    var notice = document.createElement('p');
    notice.className = 'banner info';
    var link = document.createElement('a');
    link.href = location.pathname + location.search;
    link.textContent = count + (count === 1 ? ' new proposal' : ' new proposals') + ' \\u2014 reload';
    notice.appendChild(link);
    region.replaceChildren(notice);
  });
  window.addEventListener('pagehide', function () { source.close(); });
})();
`;

/** The inbox's live-update script and the hashed path it is served at (cache forever). */
export const LIVE_INBOX_SCRIPT = Object.freeze({
  js: JS,
  path: `/assets/live-inbox.${createHash('sha256').update(JS).digest('hex').slice(0, 12)}.js`,
});

/**
 * The inbox's live region and its script: a separate file the CSP admits by the response's nonce
 * (`script-src` allows nothing else). Empty until a proposal arrives, so without JavaScript the
 * page is unchanged.
 */
export function LiveInbox({ nonce }: { readonly nonce: string }) {
  return (
    <>
      <div
        id="live-inbox"
        class="live-inbox"
        aria-live="polite"
        aria-atomic="true"
        data-testid="live-inbox"
      ></div>
      <script nonce={nonce} src={LIVE_INBOX_SCRIPT.path} defer />
    </>
  );
}

/** Serves the live-update script at its hashed path (no session needed: it is public code). */
export function liveInboxAssets(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(LIVE_INBOX_SCRIPT.path, (c) => {
    c.header('Cache-Control', 'public, max-age=31536000, immutable');
    return c.body(LIVE_INBOX_SCRIPT.js, 200, { 'Content-Type': 'text/javascript; charset=utf-8' });
  });
  return app;
}
