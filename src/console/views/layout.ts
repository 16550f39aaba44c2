/** The console's page frame: navigation, the signed-in operator, sign-out. */
import { html, type Html } from '../html.ts';

export interface PageContext {
  operator: string;
  csrf: string;
  /** Whether the approvals queue exists in this build. */
  approvals: boolean;
}

const NAV: Array<[string, string]> = [
  ['attempts', 'Attempts'],
  ['trees', 'Delegations'],
  ['approvals', 'Approvals'],
  ['escalations', 'Escalations'],
  ['breakers', 'Breakers'],
  ['push', 'Push'],
  ['audit', 'Audit'],
  ['charts', 'Charts'],
];

// htmx: no eval, no inline indicator styles (the CSP allows neither); no history cache (pages carry the CSRF token: keep them out of storage).
const HTMX_CONFIG = JSON.stringify({ historyEnabled: false, historyCacheSize: 0, allowEval: false, includeIndicatorStyles: false, allowScriptTags: false, selfRequestsOnly: true });

export function document(title: string, body: Html, head: Html = html``): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<title>${title} · Baton console</title>
<link rel="stylesheet" href="/console/assets/console.css">
${head}
</head>
${body}
</html>`;
}

/** A signed-in page. `active` names the navigation entry shown as current. */
export function page(ctx: PageContext, active: string, title: string, content: Html, notice?: { ok?: string; error?: string }): Html {
  const nav = NAV.filter(([k]) => k !== 'approvals' || ctx.approvals);
  return document(
    title,
    html`<body>
<a class="skip" href="#main">Skip to content</a>
<header>
  <span class="brand">Baton console</span>
  <nav aria-label="Console sections"><ul>${nav.map(([k, label]) => html`<li><a href="/console/${k}"${k === active ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul></nav>
  <div class="who"><span>Signed in as <strong>${ctx.operator}</strong></span>
    <form method="post" action="/console/logout" class="inline"><input type="hidden" name="csrf" value="${ctx.csrf}"><button type="submit" class="plain">Sign out</button></form>
  </div>
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${notice?.ok ? html`<p class="flash" role="status">${notice.ok}</p>` : ''}
${notice?.error ? html`<p class="error" role="alert">${notice.error}</p>` : ''}
${content}
</main>
</body>`,
    html`<script src="/console/assets/htmx.min.js" defer></script>
<script src="/console/assets/sse.min.js" defer></script>`,
  );
}

/** A hidden CSRF field: every state-changing form carries one. */
export const csrfField = (ctx: PageContext) => html`<input type="hidden" name="csrf" value="${ctx.csrf}">`;

export function loginPage(preToken: string, error?: string): Html {
  return document(
    'Sign in',
    html`<body><main id="main" class="login">
<h1>Baton operator console</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/console/login" class="stack">
  <input type="hidden" name="pre" value="${preToken}">
  <label for="key">Operator API key</label>
  <input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
  <span class="hint">Exchanged for a session cookie; the key is not kept in the browser.</span>
  <button type="submit">Sign in</button>
</form>
</main></body>`,
  );
}

/** "3 s", "4 min", "2 h": how long ago. */
export function ago(fromIso: string | undefined, now: number): string {
  if (!fromIso) return '—';
  const s = Math.max(0, Math.round((now - Date.parse(fromIso)) / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}
