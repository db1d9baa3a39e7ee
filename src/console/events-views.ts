/**
 * The console's Events page, a subscription's page, and the overview's event health, as
 * server-rendered HTML in the look of views.ts (one stylesheet, light and dark, readable at
 * 390 px). Receiver URLs, paused reasons and delivery errors come from outside (an admin, the
 * API, a receiver's answer): every one goes through escape-html, ids through encodeURIComponent.
 * URLs are shown as text, never as links (a receiver URL is not a page to visit). Every action is
 * a POST form with the CSRF token.
 */
import escapeHtml from 'escape-html';
import type { EventsHealth, FeedEnds, ReplayPreview, SignalsHealth, SubscriptionDetail, SubscriptionForm, SubscriptionShown } from './events.ts';
import { formatCount } from './format.ts';
import { EVENT_TYPES } from './events.ts';
import { timeHtml } from './format.ts';
import { dataTable } from './table.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));
const csrfField = (csrf: string): string => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;
const detailHref = (id: string): string => `/console/events/subscriptions/${encodeURIComponent(id)}`;
const count = (n: number, exact: boolean): string => `${exact ? '' : 'up to '}${n.toLocaleString('en')}`;
const receiver = (s: { method: string; url: string | null }): string => (s.method === 'poll' ? '(poll: the receiver fetches)' : (s.url ?? ''));

function stateText(s: SubscriptionShown, now: Date): string {
  if (s.state === 'paused') return `<span class="status-4">paused</span>${s.pausedReason ? `: <span dir="auto">${e(s.pausedReason)}</span>` : ''}`;
  if (s.failures > 0) return `<span class="status-4">failing</span> since ${timeHtml(s.failingSince, now)} (${e(s.failures)} attempts); next attempt ${timeHtml(s.nextAttemptAt, now)}`;
  return 'active';
}

/** What a push sends: signed SETs (RFC 8935) or Standard Webhooks JSON (webhook.ts). */
const formatText = (s: SubscriptionShown): string => (s.format === 'webhook' ? 'webhook (Standard Webhooks)' : s.format === 'ssf' ? 'SSF stream (Shared Signals)' : 'SET');

/** The events it takes: an SSF stream's are those its receiver asked for (GET /v2/ssf/stream shows them). */
const eventsText = (s: SubscriptionShown): string => (s.format === 'ssf' ? "the Shared Signals its receiver asked for" : s.events === null ? 'all' : s.events.join(', '));

function feedNote(feed: FeedEnds): string {
  const kept = feed.firstKept === undefined ? 'none kept' : `${e(feed.firstKept)} to ${e(feed.lastSeq)} kept`;
  return `<p class="muted">The team's change feed is at seq ${e(feed.lastSeq)} (${kept}; events are kept for the retention period, then pruned). SETs are signed ES256; receivers verify them with <code>/.well-known/jwks.json</code>. Webhooks (Standard Webhooks) are signed with the subscription's <code>whsec_</code> secret, shown once when it is made (<code>rollcall events subscribe --format webhook</code>, the API) or rotated.</p>`;
}

function createForm(csrf: string, form: SubscriptionForm | undefined): string {
  const ticked = new Set(form?.events ?? []);
  const boxes = EVENT_TYPES.map(
    (t) => `<label class="check"><input type="checkbox" name="events" value="${e(t)}"${ticked.has(t) ? ' checked' : ''}> ${e(t)}</label>`,
  ).join('');
  return `<h2>Add a subscription</h2>
<form method="post" action="/console/events/subscriptions" class="card">
${csrfField(csrf)}
<label for="sub-url">Receiver URL</label>
<input id="sub-url" name="url" type="text" inputmode="url" required maxlength="2000" spellcheck="false" autocapitalize="none" placeholder="https://app.example/scim-events" value="${e(form?.url)}" aria-describedby="sub-url-note">
<p class="note" id="sub-url-note">https only (plain http only on a loopback address such as 127.0.0.1, for local development). Loopback, private, link-local and unique-local addresses only when the operator allows them. Rollcall POSTs one signed SET per change (RFC 8935), starting with the next change.</p>
<label for="sub-format">Format</label>
<select id="sub-format" name="format" aria-describedby="sub-format-note"><option value="set"${form?.format === 'webhook' ? '' : ' selected'}>SET (RFC 8935, signed ES256)</option><option value="webhook"${form?.format === 'webhook' ? ' selected' : ''}>webhook (Standard Webhooks JSON, HMAC secret)</option></select>
<p class="note" id="sub-format-note">A webhook is plain JSON signed with a <code>whsec_</code> secret that is shown once, right after you add the subscription.</p>
<fieldset class="checks"><legend>Events (none ticked: every event)</legend>${boxes}</fieldset>
<label class="check"><input type="checkbox" name="full" value="1"${form?.full ? ' checked' : ''}> Full: send the changed resource (never a password), not only the names of the attributes that changed</label>
<p><button type="submit" class="primary">Add subscription</button></p>
</form>`;
}

const notice = (message?: string, error?: string): string =>
  `${message ? `<p class="ok" role="status">${e(message)}</p>` : ''}${error ? `<div class="alert" role="alert">${e(error)}</div>` : ''}`;

export function eventsBody(csrf: string, feed: FeedEnds, subscriptions: readonly SubscriptionShown[], form?: SubscriptionForm, message?: string, error?: string, now: Date = new Date()): string {
  const table = dataTable({
    headers: ['Receiver', 'Format', 'Events', 'Variant', 'State', 'Last delivered seq', 'Pending'],
    rows: subscriptions.map((s) => [
      `<a href="${detailHref(s.id)}" class="wrap">${e(receiver(s))}</a>`,
      e(formatText(s)),
      e(eventsText(s)),
      s.full ? 'full' : 'notice',
      `<span>${stateText(s, now)}</span>`,
      e(s.cursor),
      e(count(s.pending, s.pendingExact)),
    ]),
    empty: 'No subscriptions yet: add one below, or with rollcall events subscribe.',
  });
  return `${notice(message, error)}
<p>Subscriptions send your applications a signed notice of every change to this team's users and groups (RFC 9967 events). See the delivery log of one to find out why it fails; pause, resume, replay and delete it there.</p>
${feedNote(feed)}
<h2>Subscriptions</h2>
${table}
${createForm(csrf, form)}`;
}

function actions(csrf: string, s: SubscriptionShown, feed: FeedEnds): string {
  const base = detailHref(s.id);
  // An SSF stream is paused or disabled by its receiver (SSF status endpoint); enabling it here
  // tells the receiver with a stream-updated event (events/ssf/stream-events.ts).
  const pauseOrResume =
    s.format === 'ssf'
      ? s.state === 'paused'
        ? `<form method="post" action="${base}/resume" class="card">${csrfField(csrf)}
<p>Enable this SSF stream now, with a fresh retry budget; its receiver is told with a stream-updated event. A stream its receiver disabled starts after the feed's current end.</p>
<p><button type="submit" class="primary">Enable</button></p></form>`
        : '<p class="muted">An SSF stream is paused or disabled by its receiver, through the SSF status endpoint; delete it to stop it here.</p>'
      : s.state === 'paused'
      ? `<form method="post" action="${base}/resume" class="card">${csrfField(csrf)}
<p>Resume delivery now, from seq ${e(s.cursor + 1)}, with a fresh retry budget. Nothing sent while paused is lost (within the retention).</p>
<p><button type="submit" class="primary">Resume</button></p></form>`
      : `<form method="post" action="${base}/pause" class="card">${csrfField(csrf)}
<label for="pause-reason">Reason (optional, shown with the subscription)</label>
<input id="pause-reason" name="reason" type="text" maxlength="200" dir="auto" placeholder="receiver under maintenance">
<p><button type="submit" class="secondary">Pause</button></p></form>`;
  const oldest = feed.firstKept ?? feed.lastSeq + 1;
  return `<h2>Actions</h2>
${pauseOrResume}
<form method="get" action="${base}/replay" class="card">
<label for="replay-from">Replay from seq</label>
<input id="replay-from" name="from" type="text" inputmode="numeric" pattern="[0-9]*" required maxlength="15" placeholder="${e(oldest)}" aria-describedby="replay-note">
<p class="note" id="replay-note">Every kept event from this seq on is delivered again, in order, with the same <code>jti</code> (receivers de-duplicate on it). Kept now: ${feed.firstKept === undefined ? 'none' : `${e(feed.firstKept)} to ${e(feed.lastSeq)}`}.</p>
<p class="note">The next page says how many events that sends, before anything is sent.</p>
<p><button type="submit" class="secondary">Replay…</button></p></form>
<form method="get" action="${base}/delete" class="card">
<p>Delete the subscription and its delivery log. The receiver gets nothing more. The next page says what is lost, before anything is deleted.</p>
<p><button type="submit" class="danger">Delete subscription…</button></p></form>`;
}

/** The webhook secret of a subscription just made, shown this once. */
const secretNotice = (secret: string): string =>
  `<div class="card" role="status"><p><strong>Webhook secret</strong> (shown only now: copy it to the receiver, which verifies <code>webhook-signature</code> with it):</p><p><code class="wrap">${e(secret)}</code></p></div>`;

export function subscriptionBody(csrf: string, detail: SubscriptionDetail, message?: string, error?: string, secret?: string, now: Date = new Date()): string {
  const s = detail.subscription;
  const facts: [string, string][] = [
    ['Receiver', `<span class="wrap">${e(receiver(s))}</span>`],
    ['Method', s.method === 'push' ? 'push (RFC 8935)' : 'poll (RFC 8936)'],
    ['Format', e(formatText(s))],
    ['Events', e(eventsText(s))],
    ['Variant', s.full ? 'full' : 'notice'],
    ['State', stateText(s, now)],
    ['Last delivered seq', e(s.cursor)],
    ['Pending', e(count(s.pending, s.pendingExact))],
    ['Created', timeHtml(s.createdAt, now)],
    ['Id', `<code>${e(s.id)}</code>`],
  ];
  const attempts = dataTable({
    headers: ['Time', 'Seq', 'Status', 'Latency', 'Error'],
    rows: detail.attempts.map((a) => [
      timeHtml(a.at, now),
      e(a.seq),
      a.status === null || a.status >= 300 ? `<span class="status-4">${e(a.status ?? 'no answer')}</span>` : e(a.status),
      `${e(a.latencyMs)} ms`,
      a.error ? `<code>${e(a.error)}</code>` : '',
    ]),
    empty: 'No delivery attempts.',
  });
  const next = detail.next ? `<nav class="pager" aria-label="Pages"><a href="${detailHref(s.id)}?before=${encodeURIComponent(detail.next)}" rel="next">Older attempts</a></nav>` : '';
  return `<p><a href="/console/events">All subscriptions</a></p>
${notice(message, error)}
${secret === undefined ? '' : secretNotice(secret)}
<div class="card"><dl class="attrs">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl></div>
<h2>Delivery log</h2>
<p class="muted">Every push attempt, newest first (kept 7 days). Errors are categories: refused (connection refused), tls, timeout, dns, forbidden-address (an address the operator does not allow), network, http and the status.</p>
${attempts}
${next}
${actions(csrf, s, detail.feed)}`;
}

/** The overview's events tile. */
export function eventsTile(h: EventsHealth): [string, string] {
  if (h.subscriptions === 0) return ['0', 'events pending (no subscriptions)'];
  return [count(h.pending, h.exact), `events pending (${h.subscriptions} subscription${h.subscriptions === 1 ? '' : 's'})`];
}

/** Milliseconds as the overview shows them: "840 ms", "1.3 s". */
const duration = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

/** The overview's Shared Signals figure: how fast deactivations reached the streams' receivers in the last hour. */
export function signalsFigure(h: SignalsHealth | undefined): string {
  if (h === undefined) return '';
  if (h.count === 0 || h.p50Ms === undefined || h.p99Ms === undefined) return '<p class="muted" id="ssf-latency">Shared Signals: no signal accepted by a push stream\'s receiver in the last hour.</p>';
  return `<p id="ssf-latency">Shared Signals, last hour: <strong>${e(h.count)}</strong> signal${h.count === 1 ? '' : 's'} accepted by push receivers, from the commit of the change to the receiver's acceptance <strong>p50 ${e(duration(h.p50Ms))}</strong>, <strong>p99 ${e(duration(h.p99Ms))}</strong> (the promise: p99 under 5 s).</p>`;
}

/** The overview's alert for paused or failing subscriptions, or nothing. */
export function eventsAlert(h: EventsHealth): string {
  if (h.problems.length === 0) return '';
  const items = h.problems
    .map((p) => `<li><a href="${detailHref(p.id)}">${e(p.url ?? 'poll subscription')}</a> is ${p.state === 'paused' ? 'paused' : 'failing'}: <span dir="auto">${e(p.detail)}</span></li>`)
    .join('');
  return `<div class="alert" role="status">${e(h.problems.length)} event subscription(s) need attention: <ul>${items}</ul></div>`;
}

/** The step before a replay: how many events it sends again, to whom, and the form that does it. */
export function replayConfirmBody(csrf: string, p: ReplayPreview): string {
  const s = p.subscription;
  const base = detailHref(s.id);
  const count = `${p.exact ? '' : 'up to '}${formatCount(p.count)} event${p.count === 1 && p.exact ? '' : 's'}`;
  const range = p.from > p.to ? 'none kept yet: it starts with the next change' : `seq ${formatCount(p.from)} to ${formatCount(p.to)}`;
  return `<p><a href="${base}">Back to the subscription</a></p>
<div class="card" role="alert">
<p id="replay-summary">Re-send <strong>${e(count)}</strong> (${e(range)}) to <span class="wrap">${e(receiver(s))}</span>? They are delivered again in order, with their original <code>jti</code>, ${s.state === 'paused' ? 'once the subscription is resumed' : 'starting now'}; its receiver must de-duplicate on <code>jti</code>.</p>
<form method="post" action="${base}/replay" class="inline">${csrfField(csrf)}<input type="hidden" name="from" value="${e(p.from)}"><input type="hidden" name="confirmed" value="1">
<button type="submit" class="danger">Re-send ${e(count)}</button></form>
<a href="${base}">Cancel</a>
</div>`;
}

/** The step before a subscription is deleted: what it ends, and the form that does it. */
export function deleteConfirmBody(csrf: string, s: SubscriptionShown): string {
  const base = detailHref(s.id);
  const pending = s.pending === 0 ? 'Nothing is pending' : `<strong>${e(count(s.pending, s.pendingExact))} pending event${s.pending === 1 ? '' : 's'}</strong> will never be sent`;
  return `<p><a href="${base}">Back to the subscription</a></p>
<div class="card" role="alert">
<p id="delete-summary">Delete the subscription to <span class="wrap">${e(receiver(s))}</span> (${e(formatText(s))})? ${pending}; its delivery log is removed, and its receiver gets nothing more. It cannot be undone: a new subscription starts with the next change.</p>
<form method="post" action="${base}/delete" class="inline">${csrfField(csrf)}<input type="hidden" name="confirmed" value="1">
<button type="submit" class="danger">Delete subscription</button></form>
<a href="${base}">Cancel</a>
</div>`;
}
