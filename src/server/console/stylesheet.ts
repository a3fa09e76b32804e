import { createHash } from 'node:crypto';

// One stylesheet, served under its content hash so it can be cached forever. No inline styles:
// the CSP allows styles from 'self' only.
const CSS = `
:root {
  --bg: #f5f6f8; --panel: #ffffff; --ink: #16191d; --muted: #5b6470; --faint: #8a929c;
  --line: #dfe3e8; --line-strong: #c9ced6; --accent: #1f5fbf; --accent-ink: #ffffff;
  --ok: #13734b; --ok-bg: #e6f4ec; --warn: #8a5a00; --warn-bg: #fdf3dc; --bad: #b3261e; --bad-bg: #fbe9e7;
  --info-bg: #e8f0fb; --neutral-bg: #eef0f3; --bar: #14181f; --bar-ink: #e9edf2;
  --mono: ui-monospace, "SF Mono", "Cascadia Mono", "Roboto Mono", Menlo, Consolas, "Liberation Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif;
  --radius: 8px;
  color-scheme: light;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 15px/1.5 var(--sans); }
a { color: var(--accent); text-underline-offset: 2px; }
a:hover { text-decoration-thickness: 2px; }
code, .mono { font-family: var(--mono); font-size: 0.92em; }
:focus-visible { outline: 3px solid #8ab4f8; outline-offset: 2px; border-radius: 4px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--panel); padding: 8px 12px; z-index: 10; }
.skip:focus { left: 8px; top: 8px; }

.bar { background: var(--bar); color: var(--bar-ink); }
.bar-inner { max-width: 1180px; margin: 0 auto; padding: 0 24px; height: 56px; display: flex; align-items: center; gap: 28px; }
.brand { color: #fff; text-decoration: none; font-weight: 650; letter-spacing: 0.01em; display: flex; align-items: center; gap: 10px; font-size: 16px; }
.brand-mark { width: 22px; height: 22px; border-radius: 6px; background: linear-gradient(135deg, #4f8df5, #2bb673); display: inline-block; position: relative; }
.brand-mark::after { content: ""; position: absolute; left: 6px; top: 4px; width: 6px; height: 10px; border: solid #fff; border-width: 0 2.5px 2.5px 0; transform: rotate(45deg); }
.nav { display: flex; gap: 4px; }
.nav a { color: #c4ccd6; text-decoration: none; padding: 6px 12px; border-radius: 6px; font-weight: 500; }
.nav a:hover { color: #fff; background: rgba(255,255,255,0.08); }
.nav a[aria-current="page"] { color: #fff; background: rgba(255,255,255,0.14); }
.who { margin-left: auto; display: flex; align-items: center; gap: 12px; font-size: 13.5px; color: #c4ccd6; }
.who .tenant { font-family: var(--mono); background: rgba(255,255,255,0.1); color: #fff; padding: 2px 8px; border-radius: 999px; font-size: 12.5px; }
.who .role { text-transform: capitalize; color: #fff; }
.who form { margin: 0; }
.link-button { background: none; border: 1px solid rgba(255,255,255,0.25); color: #e9edf2; padding: 4px 10px; border-radius: 6px; font: inherit; cursor: pointer; }
.link-button:hover { background: rgba(255,255,255,0.08); }

main { max-width: 1180px; margin: 0 auto; padding: 28px 24px 64px; }
h1 { font-size: 24px; line-height: 1.25; margin: 0; font-weight: 650; letter-spacing: -0.01em; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin: 0 0 14px; font-weight: 650; }
.page-head { display: flex; align-items: flex-end; justify-content: space-between; gap: 16px; margin-bottom: 20px; flex-wrap: wrap; }
.page-head p { margin: 4px 0 0; color: var(--muted); }
.crumbs { font-size: 13.5px; color: var(--muted); margin-bottom: 10px; }
.crumbs a { color: var(--muted); }

.card { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: 20px 22px; }
.card + .card { margin-top: 18px; }
.grid { display: grid; grid-template-columns: minmax(0, 1fr) 360px; gap: 18px; align-items: start; }
.grid > div > .card + .card, .grid > aside > .card + .card { margin-top: 18px; }
@media (max-width: 900px) { .grid { grid-template-columns: 1fr; } .bar-inner { gap: 14px; } .who .email { display: none; } }

table.list { width: 100%; border-collapse: separate; border-spacing: 0; background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); overflow: hidden; }
table.list th { text-align: left; font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); font-weight: 600; padding: 10px 14px; background: #fafbfc; border-bottom: 1px solid var(--line); }
table.list td { padding: 12px 14px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.list tr:last-child td { border-bottom: 0; }
table.list tbody tr:hover { background: #f8fafd; }
table.list .summary a { color: var(--ink); font-weight: 560; text-decoration: none; }
table.list .summary a:hover { color: var(--accent); text-decoration: underline; }
table.list .sub { color: var(--muted); font-size: 13px; margin-top: 2px; }
.nowrap { white-space: nowrap; }
.num-col { text-align: right; }
.soon { color: var(--warn); font-weight: 600; }
.gone { color: var(--bad); font-weight: 600; }
.empty { background: var(--panel); border: 1px dashed var(--line-strong); border-radius: var(--radius); padding: 48px 24px; text-align: center; color: var(--muted); }
.empty strong { display: block; color: var(--ink); font-size: 16px; margin-bottom: 4px; }
.pager { margin-top: 14px; text-align: right; }
.tabs { display: flex; gap: 4px; flex-wrap: wrap; border-bottom: 1px solid var(--line); margin-bottom: 14px; }
.tabs a { padding: 8px 12px; color: var(--muted); text-decoration: none; border-bottom: 3px solid transparent; font-weight: 560; }
.tabs a[aria-current="page"] { color: var(--ink); border-bottom-color: var(--accent); }
.tabs .count { display: inline-block; min-width: 22px; padding: 0 6px; border-radius: 999px; background: var(--neutral-bg); color: var(--ink); font-size: 12.5px; text-align: center; }
.filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-end; margin-bottom: 16px; }
.filters label { margin-top: 0; }
.filters select, .filters input { min-width: 180px; }
.filters input[type="search"] { font: inherit; padding: 8px 10px; border: 1px solid var(--line-strong); border-radius: 6px; min-width: 260px; }
.filters select { font: inherit; padding: 8px 10px; border: 1px solid var(--line-strong); border-radius: 6px; background: var(--panel); }
table.list tr[data-current] { background: var(--info-bg); box-shadow: inset 4px 0 0 var(--accent); }
.keys { margin-top: 18px; }
kbd { font-family: var(--mono); font-size: 12px; border: 1px solid var(--line-strong); border-bottom-width: 2px; border-radius: 4px; padding: 0 5px; background: var(--panel); }

.badge { display: inline-flex; align-items: center; gap: 6px; padding: 3px 10px; border-radius: 999px; font-size: 12.5px; font-weight: 600; white-space: nowrap; background: var(--neutral-bg); color: var(--muted); }
.badge::before { content: ""; width: 7px; height: 7px; border-radius: 50%; background: currentColor; }
.badge.pending { background: var(--info-bg); color: var(--accent); }
.badge.executing { background: var(--info-bg); color: var(--accent); }
.badge.succeeded { background: var(--ok-bg); color: var(--ok); }
.badge.needs_reconciliation, .badge.revision_required { background: var(--warn-bg); color: var(--warn); }
.badge.terminal_failure { background: var(--bad-bg); color: var(--bad); }
.badge.declined, .badge.superseded, .badge.expired { background: var(--neutral-bg); color: var(--muted); }

.op { font-family: var(--mono); font-size: 12.5px; color: var(--muted); background: var(--neutral-bg); padding: 2px 7px; border-radius: 5px; white-space: nowrap; }
.hash { font-family: var(--mono); font-weight: 650; letter-spacing: 0.03em; color: var(--ink); background: #fff7d6; border: 1px solid #f0dd92; padding: 1px 6px; border-radius: 5px; }
.hash.small { font-weight: 500; font-size: 12px; background: #fffbea; }
.hash.invalid { background: var(--bad-bg); border-color: var(--bad); color: var(--bad); }
.digest { font-family: var(--mono); font-size: 12px; color: var(--muted); word-break: break-all; }

.proposal-head { display: flex; align-items: flex-start; justify-content: space-between; gap: 16px; margin-bottom: 20px; }
.proposal-head .kicker { margin: 0 0 6px; display: flex; gap: 8px; align-items: center; flex-wrap: wrap; color: var(--muted); font-size: 13.5px; }

dl.value { margin: 0; display: grid; grid-template-columns: minmax(150px, 32%) minmax(0, 1fr); column-gap: 18px; }
dl.value > dt { color: var(--muted); padding: 9px 0; border-top: 1px solid var(--line); font-size: 14px; }
dl.value > dd { margin: 0; padding: 9px 0; border-top: 1px solid var(--line); min-width: 0; overflow-wrap: anywhere; }
dl.value > dt:first-of-type, dl.value > dd:first-of-type { border-top: 0; }
dl.value dl.value { background: #fafbfc; border: 1px solid var(--line); border-radius: 6px; padding: 2px 12px; }
.money { font-weight: 650; font-variant-numeric: tabular-nums; font-size: 16px; }
.minor { color: var(--faint); font-size: 12.5px; margin-left: 8px; font-variant-numeric: tabular-nums; }
.none { color: var(--faint); font-style: italic; }
.multiline { white-space: pre-wrap; background: #fafbfc; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; font-size: 14px; }
ol.items { margin: 0; padding: 0 0 0 22px; }
ol.items > li { padding: 2px 0; }
ol.items > li::marker { color: var(--faint); font-size: 12px; }
.count { color: var(--muted); font-size: 12.5px; display: block; margin-bottom: 4px; }
.ctl { font-family: var(--mono); font-size: 11px; color: var(--bad); background: var(--bad-bg); border: 1px solid #f1b8b2; border-radius: 4px; padding: 0 3px; margin: 0 1px; }
.ctl.tag { white-space: pre-wrap; font-weight: 600; }
.ctl.script { color: #5e3d00; background: var(--warn-bg); border-color: #efd79a; }
.confusable { text-decoration: underline wavy #c77700; text-underline-offset: 3px; }
mark.odd { background: #ffd89a; color: inherit; border-radius: 2px; padding: 0 1px; }
.text-warning ul { margin: 6px 0 0; padding-left: 20px; }
.text-warning li { overflow-wrap: anywhere; }

dl.facts { margin: 0; display: grid; grid-template-columns: 116px minmax(0, 1fr); gap: 8px 12px; font-size: 14px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
dl.facts .op { white-space: normal; overflow-wrap: anywhere; }

.decide form { margin: 0; }
.approve-form { border-bottom: 1px solid var(--line); padding-bottom: 16px; margin-bottom: 14px; }
.approve-form p { margin: 0 0 12px; color: var(--muted); font-size: 13.5px; }
button, .button { font: inherit; font-weight: 600; border-radius: 7px; padding: 9px 16px; cursor: pointer; border: 1px solid var(--line-strong); background: var(--panel); color: var(--ink); }
button:hover { background: #f3f5f8; }
button.primary { background: var(--ok); border-color: var(--ok); color: #fff; width: 100%; padding: 11px 16px; font-size: 15px; }
button.primary:hover { background: #0f5f3e; }
button.primary .hash { background: rgba(255,255,255,0.16); border-color: rgba(255,255,255,0.35); color: #fff; margin-left: 6px; }
button.danger { color: var(--bad); border-color: #e7b4ae; }
button.danger:hover { background: var(--bad-bg); }
button.secondary { color: var(--accent); border-color: #b9cdee; }
button[disabled] { opacity: 0.6; cursor: progress; }
details.action { border-top: 1px solid var(--line); padding-top: 10px; margin-top: 10px; }
.approve-form + details.action { border-top: 0; padding-top: 0; margin-top: 0; }
details.action > summary { cursor: pointer; font-weight: 600; padding: 4px 0; list-style-position: inside; }
details.action[open] > summary { margin-bottom: 10px; }
label { display: block; font-size: 13.5px; font-weight: 600; margin: 10px 0 4px; }
input[type="text"], input[type="email"], input[type="password"], input[type="number"], input[type="datetime-local"], textarea {
  width: 100%; font: inherit; padding: 8px 10px; border: 1px solid var(--line-strong); border-radius: 6px; background: #fff; color: var(--ink);
}
textarea { min-height: 130px; resize: vertical; font-size: 14px; }
.form-actions { margin-top: 12px; display: flex; gap: 8px; }
.hint { color: var(--muted); font-size: 13px; margin: 6px 0 0; }

.banner { border-radius: var(--radius); padding: 12px 16px; margin-bottom: 18px; border: 1px solid; }
.banner strong { display: block; margin-bottom: 2px; }
.banner.ok { background: var(--ok-bg); border-color: #b7dcc7; color: #0d4f33; }
.banner.warn { background: var(--warn-bg); border-color: #efd79a; color: #5e3d00; }
.banner.bad { background: var(--bad-bg); border-color: #f1b8b2; color: #7d1a14; }
.banner.info { background: var(--info-bg); border-color: #bcd0f0; color: #163f7d; }
.banner code { font-size: 12.5px; }

.outcome { border-left: 4px solid var(--line-strong); }
.outcome.succeeded { border-left-color: var(--ok); }
.outcome.needs_reconciliation, .outcome.revision_required { border-left-color: #d9a21b; }
.outcome.terminal_failure { border-left-color: var(--bad); }
.outcome .headline { font-size: 17px; font-weight: 650; margin: 0 0 6px; }
.outcome p { margin: 6px 0; }
.outcome form { margin-top: 12px; }

ol.timeline { list-style: none; margin: 0; padding: 0; position: relative; }
ol.timeline > li { position: relative; padding: 0 0 16px 26px; }
ol.timeline > li::before { content: ""; position: absolute; left: 6px; top: 8px; bottom: -8px; width: 2px; background: var(--line); }
ol.timeline > li:last-child::before { display: none; }
ol.timeline > li::after { content: ""; position: absolute; left: 1px; top: 5px; width: 12px; height: 12px; border-radius: 50%; background: var(--panel); border: 2px solid var(--line-strong); }
ol.timeline > li.ok::after { border-color: var(--ok); background: var(--ok-bg); }
ol.timeline > li.bad::after { border-color: var(--bad); background: var(--bad-bg); }
ol.timeline > li.warn::after { border-color: #d9a21b; background: var(--warn-bg); }
.event-head { display: flex; gap: 10px; flex-wrap: wrap; align-items: baseline; }
.event-step { font-weight: 650; }
.event-meta { color: var(--muted); font-size: 13px; }
.event-hashes { display: flex; gap: 10px; flex-wrap: wrap; font-size: 12.5px; color: var(--muted); margin-top: 3px; }
.event-detail { margin-top: 6px; font-size: 13.5px; }
.event-detail dl.value { grid-template-columns: minmax(110px, 24%) minmax(0, 1fr); }
.event-detail dl.value > dt, .event-detail dl.value > dd { padding: 4px 0; font-size: 13px; }
.reason { font-family: var(--mono); font-size: 12px; background: var(--neutral-bg); padding: 1px 6px; border-radius: 4px; }

.login-wrap { min-height: calc(100vh - 56px); display: grid; place-items: center; padding: 24px; }
.login { width: 100%; max-width: 400px; }
.login h1 { margin-bottom: 6px; }
.login p.lead { color: var(--muted); margin: 0 0 18px; }
.login button.primary { margin-top: 18px; }
.muted { color: var(--muted); }
dl.value > dt.high-impact { color: var(--ink); font-weight: 650; border-left: 3px solid var(--warn); padding-left: 8px; }
dl.value > dd.high-impact { font-weight: 650; font-size: 16px; }
.impact { display: inline-block; margin-left: 6px; font-size: 11.5px; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; color: var(--warn); }
table.changes { width: 100%; border-collapse: collapse; font-size: 14px; }
table.changes th, table.changes td { text-align: left; vertical-align: top; padding: 8px 6px; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
table.changes thead th { border-top: 0; color: var(--muted); font-weight: 600; font-size: 13px; }
table.changes td.old { background: var(--bad-bg); }
table.changes td.new { background: var(--ok-bg); }
table.changes tr.high-impact th { border-left: 3px solid var(--warn); }
ul.same-scope { margin: 6px 0 0; padding-left: 20px; }
.event-hashes .compare.same { color: var(--ok); }
.event-hashes .compare.differs { color: var(--bad); font-weight: 600; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0,0,0,0); border: 0; }
`;

/** The console's stylesheet and the hashed path it is served at (cache forever). */
export const STYLESHEET = Object.freeze({
  css: CSS,
  path: `/assets/console.${createHash('sha256').update(CSS).digest('hex').slice(0, 12)}.css`,
});
