/**
 * The operator console: server-rendered pages on the operator listener (never
 * the public one). Sign-in exchanges an operator API key for a session cookie
 * (session.ts); every POST must carry the session's CSRF token and come from
 * this origin; every action is an OperatorService call recorded with the
 * signed-in operator as actor, exactly as through the API and the CLI.
 */
import { operatorActorRef } from '../contracts/identities.ts';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { BatonError, invalidRequest } from '../errors.ts';
import { retryAfter, type AuthThrottle } from '../http/auth-throttle.ts';
import { httpStatusOf, toBatonError } from '../http/error-map.ts';
import type { Logger } from '../log.ts';
import { type OperatorConfig } from '../operator/identity.ts';
import { ScopeKind } from '../operator/route-docs.ts';
import type { OperatorService } from '../operator/service.ts';
import type { Store } from '../store/port.ts';
import { loadAssets } from './assets.ts';
import { html, type Html } from './html.ts';
import { LiveFeed } from './live.ts';
import { ConsoleReads } from './reads.ts';
import type { ConsoleSeries } from './series.ts';
import { COOKIE, cookieOf, csrfMatches, DEFAULT_SESSION_POLICY, newToken, operatorOfKey, PRE_COOKIE, Sessions, setCookie, type ConsoleSession, type SessionPolicy } from './session.ts';
import { attemptRows, attemptsView } from './views/attempts.ts';
import { attemptView, type AttemptAudit } from './views/attempt.ts';
import { chartsView } from './views/charts.ts';
import { loginPage, page, type PageContext } from './views/layout.ts';
import { auditView, breakersView, escalationsView, pushView } from './views/ops.ts';
import { approvalsView, approvalView } from './views/approvals.ts';
import { consoleActions, DONE } from './actions.ts';
import type { RequestState } from '../gates/rules.ts';
import { delegationView, treesView } from './views/trees.ts';
import { parseTreeQuery, TREE_STATES } from '../operator/tree-page.ts';

const FILTER_FIELDS = ['caller', 'delegatee', 'state', 'since', 'until', 'limit'] as const;

export interface ConsoleDeps {
  service: OperatorService;
  store: Store;
  spaceId: string;
  operators: readonly OperatorConfig[];
  logger: Logger;
  series?: ConsoleSeries;
  sessions?: Partial<SessionPolicy>;
  /** How often the live views re-read the store while someone watches. */
  pollMs?: number;
  /** Secure cookies (behind TLS); otherwise decided per request. */
  secureCookies?: boolean;
  /** Refuses a source after too many failed sign-ins (src/http/auth-throttle.ts). */
  throttle?: AuthThrottle;
}

// Same-origin scripts and styles only; no inline script or style, no framing (clickjacking).
// Referrer-Policy same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` on form posts.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

type Signed = { session: ConsoleSession; ctx: PageContext };
const signed = new WeakMap<Request, Signed>();

export class OperatorConsole {
  readonly router: Router;
  private readonly sessions: Sessions;
  private readonly reads: ConsoleReads;
  private readonly live: LiveFeed;

  constructor(private readonly deps: ConsoleDeps) {
    this.sessions = new Sessions({ ...{}, ...DEFAULT_SESSION_POLICY, ...deps.sessions });
    this.reads = new ConsoleReads(deps);
    this.live = new LiveFeed({ render: async () => attemptRows(await this.reads.attempts(), Date.now()).value, sample: () => this.sample(), pollMs: deps.pollMs ?? 1000, logger: deps.logger });
    this.router = this.build();
  }

  close(): void {
    this.live.close();
  }

  private build(): Router {
    const outer = Router();
    const r = Router();
    const assets = loadAssets();
    outer.get('/', (_req, res) => void res.redirect(303, '/console/'));
    outer.get('/favicon.ico', (_req, res) => void res.status(204).end());
    outer.use('/console', r);
    r.use((_req, res, next) => {
      res.set({ 'content-security-policy': CSP, 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin', 'cache-control': 'no-store' });
      next();
    });
    r.get('/assets/:name', (req, res) => {
      const a = assets.get(String(req.params.name));
      if (!a) return void res.status(404).type('text/plain').send('no such asset');
      res.set({ 'content-type': a.type, etag: a.etag, 'cache-control': 'no-cache' });
      if (req.get('if-none-match') === a.etag) return void res.status(304).end();
      res.send(a.body);
    });
    r.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }));
    r.get('/login', (req, res) => this.loginForm(req, res));
    r.post('/login', (req, res) => this.login(req, res));
    r.use((req, res, next) => this.authenticate(req, res, next));
    r.use((req, res, next) => this.checkCsrf(req, res, next));
    r.post('/logout', (req, res) => {
      this.sessions.destroy(cookieOf(req.headers.cookie, COOKIE));
      res.append('set-cookie', setCookie(COOKIE, '', { maxAgeS: 0, secure: this.secure(req) }));
      res.redirect(303, '/console/login');
    });
    r.get('/', (_req, res) => void res.redirect(303, '/console/attempts'));
    r.get('/events', (req, res) => {
      const id = cookieOf(req.headers.cookie, COOKIE)!;
      this.live.watch(res, () => this.sessions.alive(id));
    });
    const view = (path: string, active: string, title: string, render: (req: Request, ctx: PageContext) => Promise<Html>) =>
      r.get(path, async (req, res) => {
        const { ctx } = signed.get(req)!;
        const ok = DONE[String(req.query.ok ?? '')];
        try {
          res.type('html').send(page(ctx, active, title, await render(req, ctx), ok ? { ok } : {}).value);
        } catch (err) {
          this.refused(req, res, err, active, title);
        }
      });
    const s = this.deps.service;
    const now = () => Date.now();
    view('/attempts', 'attempts', 'Live attempts', async () => attemptsView(await this.reads.attempts(), now()));
    view('/attempts/:id', 'attempts', 'Attempt', async (req) => attemptView((await s.attemptAudit(String(req.params.id))) as unknown as AttemptAudit));
    // Paged and filtered (issue 25 item 20): a bounded read per page whatever the volume.
    view('/trees', 'trees', 'Delegation trees', async (req) => {
      const q = parseTreeQuery(req.query);
      const page = await s.treePage(q);
      const out = [];
      for (const t of page.trees) out.push({ root: t.root, ...(t.tree ? { tree: t.tree } : {}), heads: await this.reads.headsOf(t.tree), attempts: t.attempts });
      const filter = Object.fromEntries(FILTER_FIELDS.flatMap((f) => (typeof req.query[f] === 'string' && req.query[f] !== '' ? [[f, req.query[f]]] : [])));
      return treesView(out, { filter, scanned: page.scanned, states: TREE_STATES, ...(page.next ? { next: page.next } : {}) });
    });
    view('/delegations/:id', 'trees', 'Delegation', async (req, ctx) => {
      const id = String(req.params.id);
      const head = await this.reads.head('delegation', id);
      if (!head) throw invalidRequest('no such delegation', { delegation: id.slice(0, 128) });
      return delegationView(ctx, id, head, await this.balancesOf(id));
    });
    view('/escalations', 'escalations', 'Escalations', async (_req, ctx) => escalationsView(ctx, await s.escalationList(undefined, 200), now()));
    view('/breakers', 'breakers', 'Circuit breakers', async (_req, ctx) => breakersView(ctx, await this.breakerRows()));
    view('/push', 'push', 'Push deliveries', async (req, ctx) => {
      const status = ['dead', 'pending', 'delivering', 'delivered'].find((x) => x === req.query.status) as 'dead' | undefined;
      const rows = await s.deliveries({ limit: 200, ...(status ? { status } : {}) });
      return pushView(ctx, status, rows.map(({ body: _b, ...rest }) => rest), now());
    });
    view('/approvals', 'approvals', 'Approvals', async (req) => {
      const state = ['pending', 'approved', 'admitted', 'denied', 'refused', 'expired', 'withdrawn'].find((x) => x === req.query.state) as RequestState | undefined;
      const rows = await s.listApprovals({ limit: 200, ...(state ? { state } : {}) }).catch((err: unknown) => {
        if (toBatonError(err).code === 'unsupported') return undefined; // no gates configured: say so, not an error page
        throw err;
      });
      return rows ? approvalsView(state, rows, now()) : html`<p>No human gates are configured (see <code>approvals</code> and a delegatee's <code>requireApproval</code> in the configuration).</p>`;
    });
    view('/approvals/:id', 'approvals', 'Approval request', async (req, ctx) => approvalView(ctx, await s.showApproval(String(req.params.id))));
    view('/audit', 'audit', 'Audit verify', async (req) => auditView(req.query.run === '1' ? await s.auditVerify() : undefined));
    view('/charts', 'charts', 'Charts', async () => {
      await this.sample();
      return chartsView(this.deps.series);
    });

    // Actions: each one OperatorService call, the signed-in operator as actor, then back to the page (303: no resubmission).
    const act = (path: string, back: (req: Request) => string, run: (req: Request, by: ReturnType<typeof operatorActorRef>) => Promise<string>) =>
      r.post(path, async (req, res) => {
        const { session } = signed.get(req)!;
        try {
          const done = await run(req, operatorActorRef(session.operator));
          res.redirect(303, `${back(req)}?ok=${done}`);
        } catch (err) {
          this.refused(req, res, err, 'attempts', 'Action refused');
        }
      });
    consoleActions(act, this.deps.service);
    r.use((req, res) => this.refused(req, res, invalidRequest('no such console page'), 'attempts', 'Not found'));
    return outer;
  }

  private secure(req: Request): boolean {
    return this.deps.secureCookies ?? req.secure;
  }

  private loginForm(req: Request, res: Response, error?: string, status = 200): void {
    // Login CSRF: a pre-session token, as a SameSite=Strict cookie and a form field that must match.
    const pre = newToken();
    res.append('set-cookie', setCookie(PRE_COOKIE, pre, { maxAgeS: 600, secure: this.secure(req) }));
    res.status(status).type('html').send(loginPage(pre, error).value);
  }

  private login(req: Request, res: Response): void {
    const pre = cookieOf(req.headers.cookie, PRE_COOKIE);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!sameOrigin(req) || !pre || body.pre !== pre) return this.loginForm(req, res, 'The sign-in form expired or came from another site; try again.', 403);
    const throttled = this.deps.throttle?.refusal(req);
    if (throttled) {
      res.setHeader('Retry-After', retryAfter(throttled));
      return this.loginForm(req, res, `Too many failed sign-ins from here; try again in ${retryAfter(throttled)} s.`, 429);
    }
    const operator = typeof body.key === 'string' && body.key.length <= 1024 ? operatorOfKey(this.deps.operators, body.key) : undefined;
    if (!operator) {
      this.deps.throttle?.failed(req);
      this.deps.logger.warn({ console: 'sign-in refused' }, 'console sign-in with an unknown key');
      return this.loginForm(req, res, this.deps.operators.length === 0 ? 'No operators are configured.' : 'That key is not an operator key.', 401);
    }
    const { id } = this.sessions.create(operator);
    const maxAgeS = Math.floor(Math.min(this.policy().absoluteMs, 24 * 3600_000) / 1000);
    res.append('set-cookie', setCookie(PRE_COOKIE, '', { maxAgeS: 0, secure: this.secure(req) }));
    res.append('set-cookie', setCookie(COOKIE, id, { maxAgeS, secure: this.secure(req) }));
    this.deps.logger.info({ operator }, 'console sign-in');
    res.redirect(303, '/console/attempts');
  }

  private policy(): SessionPolicy {
    return { ...{}, ...DEFAULT_SESSION_POLICY, ...this.deps.sessions };
  }

  private authenticate(req: Request, res: Response, next: NextFunction): void {
    const session = this.sessions.get(cookieOf(req.headers.cookie, COOKIE));
    if (!session) {
      if (req.method === 'GET' && req.path !== '/events') return void res.redirect(303, '/console/login');
      return void res.status(401).type('text/plain').send('authentication_required: sign in first');
    }
    signed.set(req, { session, ctx: { operator: session.operator, csrf: session.csrf, approvals: true } });
    next();
  }

  /** Every state change needs the session's token and a same-origin request (OWASP synchronizer token + origin check). */
  private checkCsrf(req: Request, res: Response, next: NextFunction): void {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    const { session } = signed.get(req)!;
    if (sameOrigin(req) && csrfMatches(session, (req.body as Record<string, unknown> | undefined)?.csrf)) return next();
    this.deps.logger.warn({ operator: session.operator, path: req.path }, 'console request refused: CSRF check failed');
    this.refused(req, res, new BatonError('deny', 'refused: the request did not carry this session\'s CSRF token or came from another origin'), 'attempts', 'Refused');
  }

  private refused(req: Request, res: Response, err: unknown, active: string, title: string): void {
    const e = toBatonError(err);
    if (e.code === 'storage_error') this.deps.logger.error({ err: e.cause ?? e, route: req.path }, 'console action failed');
    const status = httpStatusOf(e);
    const s = signed.get(req);
    const text = `${e.code}: ${e.message}`;
    if (!s) return void res.status(status).type('text/plain').send(text);
    res.status(status).type('html').send(page(s.ctx, active, title, html`<p><a href="/console/${active}">Back</a></p>`, { error: text }).value);
  }

  private async balancesOf(id: string) {
    for (const t of await this.deps.service.trees(50)) {
      const found = find(t.tree as Node | undefined, id);
      if (found) return found.balances;
    }
    return [];
  }

  private async breakerRows() {
    const seen = new Map<string, { kind: string; id: string }>();
    for (const e of await this.deps.service.escalationList(undefined, 500)) {
      const scope = e.body.kind === 'breaker_tripped' ? e.body.subject.scope : undefined;
      const i = scope?.indexOf(':') ?? -1;
      if (scope && i > 0 && !seen.has(scope)) seen.set(scope, { kind: scope.slice(0, i), id: scope.slice(i + 1) });
    }
    const rows = [];
    for (const s of seen.values()) rows.push({ ...{}, ...s, head: ScopeKind.safeParse(s.kind).success ? await this.reads.head(ScopeKind.parse(s.kind), s.id) : undefined });
    return rows;
  }

  /** Samples the levels the charts show over time. */
  private async sample(): Promise<void> {
    const series = this.deps.series;
    if (!series) return;
    const held = await this.reads.held();
    series.gauge('held reservations', held.count);
    series.gauge('outbox depth', await this.reads.outboxDepth());
  }
}

type Node = { node_id: string; balances: Array<{ dimension: string; ceiling: string; consumed: string; reserved: string }>; children: Node[] };
function find(n: Node | undefined, id: string): Node | undefined {
  if (!n) return undefined;
  if (n.node_id === id) return n;
  for (const c of n.children) {
    const f = find(c, id);
    if (f) return f;
  }
  return undefined;
}

/** Origin (or, failing that, Sec-Fetch-Site) must say the request came from this console. */
function sameOrigin(req: Request): boolean {
  const origin = req.get('origin');
  if (origin !== undefined) return origin === `${req.protocol}://${req.get('host')}`;
  const site = req.get('sec-fetch-site');
  return site === undefined || site === 'same-origin';
}
