import { createHash } from 'node:crypto';

// Keyboard triage for the inbox, as progressive enhancement: without it every row is a link and the
// filters are a plain GET form. j/k move between rows, o or Enter opens one, ? shows the keys, /
// focuses the search. No key decides anything: approving needs the proposal page and its button.
const JS = `(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll('[data-inbox-row]'));
  var help = document.getElementById('inbox-keys');
  var current = -1;
  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(target.tagName));
  }
  function select(i) {
    if (rows.length === 0) return;
    current = Math.max(0, Math.min(rows.length - 1, i));
    rows.forEach(function (row, n) {
      if (n === current) row.setAttribute('data-current', 'true');
      else row.removeAttribute('data-current');
    });
    var link = rows[current].querySelector('a[data-open]');
    if (link) link.focus();
  }
  function toggleHelp(show) {
    if (!help) return;
    help.hidden = show === undefined ? !help.hidden : !show;
  }
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || typing(e.target)) return;
    if (e.key === 'j') { e.preventDefault(); select(current + 1); }
    else if (e.key === 'k') { e.preventDefault(); select(current < 0 ? 0 : current - 1); }
    else if (e.key === 'o' && current >= 0) {
      var link = rows[current].querySelector('a[data-open]');
      if (link) { e.preventDefault(); window.location.assign(link.getAttribute('href')); }
    }
    else if (e.key === '?') { e.preventDefault(); toggleHelp(); }
    else if (e.key === 'Escape') toggleHelp(false);
    else if (e.key === '/') {
      var search = document.getElementById('inbox-q');
      if (search) { e.preventDefault(); search.focus(); }
    }
  });
  rows.forEach(function (row, n) {
    row.addEventListener('focusin', function () { if (current !== n) select(n); });
  });
  var hint = document.getElementById('inbox-keys-hint');
  if (hint) hint.hidden = false;
})();
`;

/** The inbox's keyboard script and the hashed path it is served at (cache forever; loaded with the CSP nonce). */
export const INBOX_SCRIPT = Object.freeze({
  js: JS,
  path: `/assets/inbox.${createHash('sha256').update(JS).digest('hex').slice(0, 12)}.js`,
});
