import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';

// Keeps the inbox honest while it is open (GET /api/v1/events); the inbox is complete without it.
// - A new proposal counts toward "N new proposals — reload" only when the server says it belongs
//   in this list (GET /inbox/match with the page's own query string): a filtered list never
//   announces a row it would not show.
// - A row decided elsewhere (another tab, another approver) leaves a waiting list (Pending,
//   Needs you) or shows its new status; a row this operator approved elsewhere leaves Needs you;
//   another approver's approval updates its "k of n approvals".
// - A refused stream (429: too many tabs; 401: signed out) says so in an alert, never silence.
// Text only through textContent: no markup is built from event data.
const JS = `(function () {
  'use strict';
  var region = document.getElementById('live-inbox');
  var alertBox = document.getElementById('live-inbox-alert');
  if (!region || !alertBox || typeof EventSource === 'undefined') return;
  var view = region.getAttribute('data-view') || '';
  var you = region.getAttribute('data-you') || '';
  var waitingView = view === 'pending' || view === 'needs';
  var added = 0;
  var gone = 0;
  var checked = 0;
  var seen = {};
  function say() {
    var parts = [];
    if (added > 0) parts.push(added + (added === 1 ? ' new proposal' : ' new proposals') + ' in this list');
    if (gone > 0) parts.push(gone + (gone === 1 ? ' proposal was' : ' proposals were') + ' decided elsewhere and left this list');
    if (parts.length === 0) return;
    var notice = document.createElement('p');
    notice.className = 'banner info';
    notice.setAttribute('data-testid', 'live-notice');
    notice.appendChild(document.createTextNode(parts.join('; ') + ' \\u2014 '));
    var link = document.createElement('a');
    link.href = location.pathname + location.search;
    link.textContent = 'reload';
    notice.appendChild(link);
    region.replaceChildren(notice);
  }
  function rowOf(id) {
    var rows = document.querySelectorAll('[data-inbox-row]');
    for (var i = 0; i < rows.length; i++) if (rows[i].getAttribute('data-proposal-id') === id) return rows[i];
    return null;
  }
  function parse(e) {
    try { return JSON.parse(e.data); } catch (err) { return null; }
  }
  function leave(row) {
    row.parentNode.removeChild(row);
    gone += 1;
    say();
  }
  var counted = {};
  // Asks the server whether a proposal belongs in this list now; counts it once.
  function announce(id) {
    var q = location.search ? location.search + '&' : '?';
    fetch('/inbox/match' + q + 'id=' + encodeURIComponent(id), { credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (m) { if (m && m.match === true && !counted[id]) { counted[id] = true; added += 1; say(); } })
      .catch(function () {})
      .then(function () { checked += 1; region.setAttribute('data-checked', String(checked)); });
  }
  function onCreated(e) {
    var d = parse(e);
    if (!d || typeof d.proposalId !== 'string' || seen[d.proposalId] || rowOf(d.proposalId)) return;
    seen[d.proposalId] = true;
    announce(d.proposalId);
  }
  // An escalation brings a proposal into the escalation group's Needs you: announced like a new one.
  function onEscalated(e) {
    var d = parse(e);
    if (!d || typeof d.proposalId !== 'string' || rowOf(d.proposalId)) return;
    announce(d.proposalId);
  }
  function onApproval(e) {
    var d = parse(e);
    if (!d) return;
    var row = rowOf(d.proposalId);
    if (!row) return;
    if (view === 'needs' && d.actor === you) { leave(row); return; }
    var quorum = row.querySelector('[data-testid="approvals"]');
    if (quorum && d.approvals) quorum.textContent = d.approvals.given + ' of ' + d.approvals.required + ' approvals';
  }
  function onDecided(e) {
    var d = parse(e);
    if (!d || d.status === 'pending') return;
    var row = rowOf(d.proposalId);
    if (!row) return;
    if (waitingView) { leave(row); return; }
    row.setAttribute('data-status', d.status);
    var cell = row.querySelector('[data-cell="state"]');
    if (cell) cell.textContent = String(d.status).replace(/_/g, ' ');
  }
  function refused(text) {
    var notice = document.createElement('p');
    notice.className = 'banner warn';
    notice.setAttribute('data-testid', 'live-refused');
    notice.textContent = text;
    alertBox.replaceChildren(notice);
  }
  // EventSource hides the status of a refused stream: one plain request learns it.
  function explain() {
    var ctl = typeof AbortController === 'undefined' ? null : new AbortController();
    fetch('/api/v1/events', { credentials: 'same-origin', signal: ctl ? ctl.signal : undefined })
      .then(function (r) {
        if (ctl) ctl.abort();
        if (r.status === 429) refused('Live updates are off: you have the most live streams open (one per console tab). Close another tab, then reload this one.');
        else if (r.status === 401) refused('Live updates stopped: you are signed out. Sign in again to see new proposals.');
        else if (r.status === 403) refused('Live updates are not available to this account.');
        else if (r.ok) refused('Live updates were interrupted. Reload to resume them.');
        else refused('Live updates are off: the server refused the live stream (HTTP ' + r.status + '). Reload to try again.');
      })
      .catch(function () { refused('Live updates are off: the server cannot be reached. Reload to try again.'); });
  }
  var source = new EventSource('/api/v1/events');
  source.addEventListener('proposal.created', onCreated);
  source.addEventListener('proposal.escalated', onEscalated);
  source.addEventListener('proposal.approval_given', onApproval);
  source.addEventListener('proposal.decided', onDecided);
  source.addEventListener('proposal.outcome', onDecided);
  // data-live says whether the stream is open now (what a script or a test can wait on).
  source.addEventListener('open', function () { alertBox.replaceChildren(); region.setAttribute('data-live', 'open'); });
  source.addEventListener('error', function () {
    region.setAttribute('data-live', 'closed');
    // CONNECTING: the browser reconnects by itself. CLOSED: the server refused the stream.
    if (source.readyState === EventSource.CLOSED) explain();
  });
  window.addEventListener('pagehide', function () { source.close(); });
})();
`;

/** The inbox's live-update script and the hashed path it is served at (cache forever). */
export const LIVE_INBOX_SCRIPT = Object.freeze({
  js: JS,
  path: `/assets/live-inbox.${createHash('sha256').update(JS).digest('hex').slice(0, 12)}.js`,
});

/** Props of {@link LiveInbox}. */
export interface LiveInboxProps {
  readonly nonce: string;
  /** The list shown (`needs`, `pending`, `recent`, a status): decided rows leave a waiting list. */
  readonly view: string;
  /** The signed-in operator's actor id: their own approval elsewhere takes a row out of "Needs you". */
  readonly you: string;
}

/**
 * The inbox's live regions and its script: a separate file the CSP admits by the response's nonce
 * (`script-src` allows nothing else). Both regions are empty until something happens, so without
 * JavaScript the page is unchanged: a polite one for new and decided proposals, an alert for a
 * refused stream.
 */
export function LiveInbox({ nonce, view, you }: LiveInboxProps) {
  return (
    <>
      <div
        id="live-inbox"
        class="live-inbox"
        aria-live="polite"
        aria-atomic="true"
        data-testid="live-inbox"
        data-view={view}
        data-you={you}
      ></div>
      <div id="live-inbox-alert" class="live-inbox" role="alert" data-testid="live-inbox-alert"></div>
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
