/**
 * The express application: health, readiness and the routers of each
 * capability. The forwarding hot path is mounted separately on purpose (see
 * STYLE.md): no body parser or middleware stack runs before it.
 */
import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import type { Logger } from '../log.ts';
import type { Store } from '../store/port.ts';
import { accessLog, type AccessLine } from './access-log.ts';
import { fromHttpError, noSuchRoute, sendHttpError, toBatonError } from './error-map.ts';

export interface AppDeps {
  store: Store;
  logger: Logger;
  /**
   * Parts that work but not fully: /readyz stays 200 (other delegatees serve)
   * and answers `degraded`, naming each (e.g. a delegatee whose card does not verify).
   */
  degraded?: () => ReadonlyArray<Record<string, unknown>>;
  /** Routers mounted at the root, in order (well-known, admin, A2A front door…). */
  routers?: Router[];
  /** Sees each request's access-log line once it is answered (request metrics). */
  observe?: (line: AccessLine) => void;
  /** Runs before every route, health included (the operator listener's Host check). */
  guard?: RequestHandler;
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // routers that cache set their own strong ETags
  app.use(accessLog(deps.logger, deps.observe));
  if (deps.guard) app.use(deps.guard);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await deps.store.ping();
      const degraded = deps.degraded?.() ?? [];
      res.json(degraded.length > 0 ? { status: 'degraded', degraded } : { status: 'ready' });
    } catch (err) {
      const e = toBatonError(err);
      deps.logger.warn({ code: e.code }, 'readiness check failed');
      res.status(503).json({ status: 'not_ready', code: e.code });
    }
  });

  for (const router of deps.routers ?? []) app.use(router);

  app.use((_req, res) => {
    sendHttpError(res, noSuchRoute());
  });
  app.use(errorHandler(deps.logger));
  return app;
}

function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const e = fromHttpError(err);
    if (e.code === 'storage_error') logger.error({ err: e.cause ?? e }, 'request failed');
    sendHttpError(res, e);
  };
}
