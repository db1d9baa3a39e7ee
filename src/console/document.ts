/**
 * The console's HTML documents' shared parts: the head every page has, and the card layout of
 * the pages for someone not signed in (sign-in, the second step, a password link). The signed-in
 * frame with its navigation is views.ts `page`; a setup link's frame is wizard-views.ts `setupPage`.
 */
import escapeHtml from 'escape-html';

const e = (value: string): string => escapeHtml(value);

/** The console's script: local times, copy buttons, confirmations. */
export const CONSOLE_SCRIPT = '<script src="/console/assets/console.js" defer></script>';

/** Every console document's start and head: `title` (plain text, escaped here), the stylesheet, the icon, then `extra` (trusted HTML). */
export function documentHead(title: string, extra = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${e(title)}</title>
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
${extra}
</head>`;
}

/**
 * A page for someone not signed in (sign-in, the second step, a password link): one card with
 * the brand and `heading`, then `body` (trusted HTML); `extra` goes in the head.
 */
export function signedOutPage(p: { readonly title: string; readonly heading: string; readonly body: string; readonly extra?: string }): string {
  return `${documentHead(`${p.title} · Rollcall console`, p.extra)}
<body>
<main class="card signin" aria-labelledby="title">
<p class="brand"><span class="mark" aria-hidden="true">R</span>Rollcall console</p>
<h1 id="title">${e(p.heading)}</h1>
${p.body}
</main>
</body>
</html>
`;
}
