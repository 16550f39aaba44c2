/**
 * GET /admin/openapi.json and GET /admin/docs: the operator API's description
 * and a self-contained reference page (no CDN: the machines may be offline).
 * The page renders the document and can send requests with a key typed into it
 * (kept in the page only, never stored).
 */
import { Router } from 'express';
import { operatorOpenApi } from './openapi.ts';

export function apiDocsRouter(): Router {
  const router = Router();
  const doc = JSON.stringify(operatorOpenApi());
  router.get('/admin/openapi.json', (_req, res) => void res.type('application/json').setHeader('Cache-Control', 'no-cache').send(doc));
  router.get('/admin/docs', (_req, res) => {
    // Inline script and style only; nothing may be loaded from elsewhere.
    // Operators type their key here: no other site may frame it (clickjacking; issue #25 item 19).
    res.setHeader('Content-Security-Policy', "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    res.setHeader('X-Frame-Options', 'DENY');
    res.type('text/html').send(PAGE);
  });
  return router;
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Baton operator API</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2rem;max-width:70rem;color:#222}
h1{font-size:1.4rem}.op{border:1px solid #ccc;border-radius:6px;margin:.6rem 0;padding:.4rem .8rem}
.m{display:inline-block;width:3.5rem;font-weight:bold}.get{color:#06c}.post{color:#080}
code,pre,textarea,input{font:12px ui-monospace,monospace}pre{background:#f6f6f6;padding:.5rem;overflow:auto;max-height:20rem}
textarea{width:100%;height:5rem}label{display:block;margin:.2rem 0}summary{cursor:pointer}
</style></head><body>
<h1>Baton operator API</h1>
<p id="info"></p>
<label>Operator API key (sent as X-API-Key; kept in this page only): <input id="key" type="password" size="40" autocomplete="off"></label>
<div id="ops">Loading openapi.json…</div>
<script>
const el = (tag, attrs = {}, ...kids) => { const e = document.createElement(tag); Object.assign(e, attrs); e.append(...kids); return e; };
fetch('openapi.json').then((r) => r.json()).then((doc) => {
  document.getElementById('info').textContent = doc.info.title + ' ' + doc.info.version + ' — ' + doc.info.description;
  const ops = document.getElementById('ops'); ops.textContent = '';
  for (const [path, methods] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(methods)) ops.append(render(path, method, op));
});
function render(path, method, op) {
  const inputs = {};
  const form = el('div');
  for (const p of op.parameters || []) form.append(el('label', {}, p.name + ' (' + p.in + (p.required ? ', required' : '') + (p.schema.enum ? ': ' + p.schema.enum.join(' | ') : '') + ') ', inputs[p.name] = el('input', { size: 30 })));
  const schema = op.requestBody && op.requestBody.content['application/json'].schema;
  let body;
  if (schema) form.append(el('div', {}, 'Request body schema:'), el('pre', {}, JSON.stringify(schema, null, 2)), body = el('textarea', { value: '{}' }));
  const out = el('pre');
  const send = el('button', { textContent: 'Send', onclick: async () => {
    let url = path; const q = new URLSearchParams();
    for (const p of op.parameters || []) { const v = inputs[p.name].value; if (p.in === 'path') url = url.replace('{' + p.name + '}', encodeURIComponent(v)); else if (v) q.set(p.name, v); }
    const headers = { 'x-api-key': document.getElementById('key').value };
    if (body) headers['content-type'] = 'application/json';
    const r = await fetch(url + (q.size ? '?' + q : ''), { method: method.toUpperCase(), headers, body: body ? body.value : undefined });
    out.textContent = r.status + ' ' + r.statusText + '\\n' + JSON.stringify(await r.json().catch(() => null), null, 2);
  } });
  return el('details', { className: 'op' }, el('summary', {}, el('span', { className: 'm ' + method, textContent: method.toUpperCase() }), el('code', {}, path), ' — ' + op.summary), form, send, out);
}
</script></body></html>
`;
