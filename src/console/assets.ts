/**
 * The console's stylesheet, its one small script and its icon, served by Rollcall itself (no CDN,
 * no build step). The stylesheet extends the OAuth pages' look (oauth/views.ts): the same colours,
 * light and dark. At 390 px no page scrolls sideways: a `table.stack` (table.ts) becomes one card
 * of "label value" lines per row, a `dl.attrs` puts each name above its value, and long ids,
 * emails and URLs wrap inside their box. The script adds the copy button's behaviour and the
 * reader's local time to every `<time datetime>` (format.ts timeHtml); every page works without it.
 */
export const CONSOLE_CSS = `:root {
  color-scheme: light dark;
  --bg: #f4f5f7; --card: #ffffff; --text: #1d2330; --muted: #5b6474; --line: #d9dde5;
  --accent: #2f5bd3; --accent-text: #ffffff; --danger-bg: #fdecec; --danger: #9b1c1c; --ok-bg: #e6f4ea; --ok: #1e5e33; --focus: #f0b429;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #12151c; --card: #1b2029; --text: #e8ebf1; --muted: #a3abba; --line: #2f3645;
    --accent: #8aa5f5; --accent-text: #0b0e14; --danger-bg: #3a1d1f; --danger: #ffb4b4; --ok-bg: #17301f; --ok: #a8e2b8; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: var(--accent); }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .75rem 1rem; background: var(--card); border-bottom: 1px solid var(--line); }
.brand { display: flex; align-items: center; gap: .5rem; font-weight: 600; color: var(--muted); margin: 0; }
.mark { display: inline-grid; place-items: center; width: 1.75rem; height: 1.75rem; border-radius: 6px; background: var(--accent); color: var(--accent-text); font-weight: 700; }
nav.main ul { display: flex; flex-wrap: wrap; gap: .25rem; list-style: none; margin: 0; padding: 0; }
nav.main a { display: block; padding: .35rem .6rem; border-radius: 6px; text-decoration: none; color: var(--text); }
nav.main a[aria-current=page] { background: var(--accent); color: var(--accent-text); }
.who { margin-left: auto; display: flex; align-items: center; gap: .5rem; color: var(--muted); font-size: .9rem; }
main { max-width: 72rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
h1 { font-size: 1.4rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 1rem 1.25rem; margin: 0 0 1rem; overflow-wrap: break-word; }
.signin { max-width: 26rem; margin: 3rem auto; }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: .75rem; margin-bottom: 1rem; }
.tile { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: .75rem 1rem; }
.tile .n { font-size: 1.6rem; font-weight: 700; display: block; }
.tile .l { color: var(--muted); font-size: .9rem; }
.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 12px; }
table { border-collapse: collapse; width: 100%; font-size: .93rem; }
th, td { text-align: left; padding: .5rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
td.wrap, td code { overflow-wrap: anywhere; word-break: break-word; }
/* Ids, emails, URLs and tokens have no spaces: they may break anywhere, and only they. */
main code, .wrap, .id, .email { overflow-wrap: anywhere; }
main p, main li, main h1, main h2, main h3, main dd, main td, main label, main legend, main summary { overflow-wrap: break-word; }
img, svg, video { max-width: 100%; height: auto; }
.visually-hidden { position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0; }
tr:last-child td { border-bottom: none; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem .75rem; align-items: flex-end; margin-bottom: 1rem; }
form.filters > div { display: flex; flex-direction: column; min-width: 9rem; flex: 1 1 9rem; }
form.filters small { color: var(--muted); font-size: .8rem; margin-top: .2rem; }
label { font-weight: 600; font-size: .9rem; margin: .5rem 0 .25rem; display: block; }
input[type=text], input[type=password], input[type=search], input[type=email], input[type=url], input[type=tel], input[type=number], input[type=date], input[type=datetime-local], input[type=time], textarea, select { width: 100%; max-width: 100%; min-width: 0; padding: .5rem .65rem; font: inherit; color: var(--text); background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
button { font: inherit; cursor: pointer; border-radius: 8px; padding: .5rem 1rem; border: 1px solid transparent; }
button.primary { background: var(--accent); color: var(--accent-text); font-weight: 600; }
button.secondary { background: transparent; color: var(--text); border-color: var(--line); }
button.danger { background: transparent; color: var(--danger); border-color: var(--danger); }
button.link { background: none; border: none; padding: 0; color: var(--accent); text-decoration: underline; }
a:focus-visible, input:focus-visible, button:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible, [tabindex]:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.alert { background: var(--danger-bg); color: var(--danger); border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1rem; }
.ok { background: var(--ok-bg); color: var(--ok); border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1rem; }
.muted, .note { color: var(--muted); font-size: .9rem; }
.pager { display: flex; gap: 1rem; margin: .75rem 0; }
.secret { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .88rem; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .35rem .5rem; overflow-wrap: anywhere; word-break: break-all; }
pre { white-space: pre-wrap; margin: .25rem 0; max-height: 16rem; overflow: auto; }
.status-4, .status-5 { color: var(--danger); font-weight: 600; }
dl.attrs { display: grid; grid-template-columns: minmax(8rem, max-content) minmax(0, 1fr); gap: .25rem 1rem; margin: 0; }
/* A long name (an extension's URN) wraps in its column rather than squeezing the values. */
dl.attrs dt { color: var(--muted); max-width: 16rem; overflow-wrap: anywhere; }
dl.attrs dd { margin: 0; min-width: 0; overflow-wrap: break-word; }
.inline { display: inline; }
fieldset.checks { border: 1px solid var(--line); border-radius: 8px; margin: .75rem 0; padding: .25rem .75rem .5rem; display: flex; flex-wrap: wrap; gap: 0 1.25rem; }
fieldset.checks legend { font-weight: 600; font-size: .9rem; padding: 0 .25rem; }
label.check { font-weight: 400; display: flex; align-items: center; gap: .4rem; margin: .35rem 0; }
label.check input { width: 1.1rem; height: 1.1rem; flex: none; }
.alert ul { margin: .25rem 0 0; padding-left: 1.25rem; overflow-wrap: anywhere; }
/* The connection wizard (wizard-views.ts). */
ul.paths { list-style: none; margin: 0; padding: 0; display: grid; gap: .75rem; }
ol.steps { padding-left: 1.25rem; }
ol.steps li { margin: .25rem 0; }
.test-state .pending { background: var(--card); border: 1px dashed var(--line); border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1rem; }
details summary { cursor: pointer; margin: .5rem 0; }
/* The directory's pages (directory-views.ts): link buttons, values lists, form groups; one column of attributes when narrow. */
a.button { display: inline-block; padding: .5rem 1rem; border-radius: 8px; border: 1px solid var(--line); text-decoration: none; color: var(--text); background: var(--card); }
a.button.danger { color: var(--danger); border-color: var(--danger); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0 1rem; }
ul.values { margin: 0; padding-left: 1.1rem; }
fieldset.group { border: 1px solid var(--line); border-radius: 8px; margin: .75rem 0; padding: .25rem .75rem .75rem; }
fieldset.group legend { font-weight: 600; padding: 0 .25rem; }
.card h3 { margin: 0; font-size: 1rem; }
@media (max-width: 40rem) { dl.attrs { grid-template-columns: 1fr; gap: 0; } dl.attrs dd { margin-bottom: .4rem; } }
/* Narrow screens (40rem = 640 px): nothing is wider than the screen. */
@media (max-width: 40rem) {
  main { padding: 1rem .75rem 2rem; }
  header.top { padding: .5rem .75rem; }
  .who { margin-left: 0; width: 100%; }
  .card { padding: .75rem; }
  th, td { padding: .45rem .5rem; }
  form.filters > div { min-width: 100%; }
  /* Each name above its value, the value the full width. */
  dl.attrs { display: block; }
  dl.attrs dt { max-width: none; margin-top: .5rem; font-size: .85rem; font-weight: 600; }
  dl.attrs dt:first-child { margin-top: 0; }
  pre { max-width: 100%; }
  /* A stacked table shows each row as a card of "label value" lines. */
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack tr { border-bottom: 1px solid var(--line); padding: .35rem 0; }
  table.stack tr:last-child { border-bottom: none; }
  /* The label floats in the cell's left padding; the value flows beside it as written (text, links, forms). */
  table.stack td { border: none; padding: .2rem .75rem .2rem 9rem; display: flow-root; overflow-wrap: break-word; }
  table.stack td[data-label]::before { content: attr(data-label); float: left; width: 7.75rem; margin-left: -8.25rem; color: var(--muted); font-weight: 600; font-size: .85rem; overflow-wrap: break-word; }
  table.stack td[data-label=""], table.stack td[colspan] { padding-left: .75rem; }
  table.stack td[data-label=""]::before { content: none; }
}
/* The audit log (audit-views.ts): date pickers like the other fields, a story that wraps, folded details. */
input[type=date], input[type=datetime-local] { width: 100%; padding: .45rem .65rem; font: inherit; color: var(--text); background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
input[aria-invalid=true] { border-color: var(--danger); }
.hint { font-weight: 400; color: var(--muted); }
table.audit .story { overflow-wrap: anywhere; }
table.audit td { overflow-wrap: anywhere; }
table.audit details summary { cursor: pointer; color: var(--accent); }
table.audit details dl.attrs { margin-top: .35rem; font-size: .88rem; }
table.audit td:first-child { white-space: nowrap; }
@media (max-width: 40rem) {
  table.audit details dl.attrs { grid-template-columns: 1fr; }
  /* Stacked, the audit table's labels (When, Event, Details) are short: a narrower label column, and the time may wrap. */
  table.stack.audit td { padding-left: 5.75rem; }
  table.stack.audit td[data-label]::before { width: 4.5rem; margin-left: -5rem; }
  table.stack.audit td:first-child { white-space: normal; }
}
/* The header's twelve sections on a narrow screen: a compact grid of equal cells, not six ragged rows of links. */
@media (max-width: 40rem) {
  nav.main { width: 100%; }
  nav.main ul { display: grid; grid-template-columns: repeat(auto-fill, minmax(6.75rem, 1fr)); gap: .2rem; }
  nav.main a { padding: .3rem .45rem; font-size: .88rem; line-height: 1.3; }
}
`;

/**
 * The console's script (loaded with defer: it runs once the page is parsed):
 * - a copy button (`data-copy`) copies the text of the element it names and says so;
 * - every `<time datetime>` (format.ts timeHtml: relative text, exact UTC time in its title) gets
 *   the reader's local date and time after its relative text: "3 hours ago · 27 Nov 2026, 13:04";
 * - a live region with data-poll (the wizard's Test state) is refreshed from that URL every second
 *   until it shows data-state="ok" (for at most 15 minutes); without the script, the page's own
 *   link reloads it.
 */
export const CONSOLE_JS = `document.addEventListener('click', function (event) {
  var button = event.target.closest && event.target.closest('button[data-copy]');
  if (!button) return;
  var source = document.getElementById(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(function () {
    var status = document.getElementById(button.getAttribute('data-copy') + '-status');
    if (status) status.textContent = 'Copied';
  });
});
(function () {
  var box = document.querySelector('[data-poll]');
  if (!box || !window.fetch) return;
  var url = box.getAttribute('data-poll');
  var left = 900;
  function tick() {
    if (box.querySelector('[data-state="ok"]') || --left < 0) return;
    fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } }).then(function (response) {
      return response.ok ? response.text() : null;
    }).then(function (html) {
      if (html !== null && html !== box.innerHTML) box.innerHTML = html;
      setTimeout(tick, 1000);
    }, function () { setTimeout(tick, 3000); });
  }
  setTimeout(tick, 1000);
})();
(function () {
  var local;
  try {
    local = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
  } catch (error) {
    return;
  }
  var times = document.querySelectorAll('time[datetime]');
  for (var i = 0; i < times.length; i++) {
    var time = times[i];
    if (time.hasAttribute('data-local')) continue;
    var at = new Date(time.getAttribute('datetime'));
    if (isNaN(at.getTime())) continue;
    var text = local.format(at);
    time.setAttribute('data-local', text);
    time.textContent = time.textContent.trim() + ' \u00b7 ' + text;
  }
})();
`;

/** The console's icon (the brand mark, an R on the accent colour), served at /console/assets/favicon.svg and /favicon.ico. */
export const CONSOLE_ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f5bd3"/><path d="M11 24V8h6a4.5 4.5 0 0 1 0 9h-6m6 0 5 7" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>
`;
