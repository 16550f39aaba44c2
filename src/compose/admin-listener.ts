/**
 * The operator listener (README "Operating Baton"): /metrics first (it needs no
 * operator key), the console, then the operator API — on its own address,
 * never reachable on the public port. Not started when there are neither
 * operators nor metrics.
 */
import type { Server } from 'node:http';
import type { Config } from '../config.ts';
import { OperatorConsole } from '../console/router.ts';
import type { ConsoleSeries } from '../console/series.ts';
import { createApp } from '../http/app.ts';
import { AuthThrottle } from '../http/auth-throttle.ts';
import { hostCheck } from '../http/host-check.ts';
import { createListener, listen } from '../http/listener.ts';
import type { Logger } from '../log.ts';
import type { LiveConfig } from '../operator/reload.ts';
import { operatorRouter } from '../operator/router.ts';
import type { OperatorService } from '../operator/service.ts';
import type { Store } from '../store/port.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';

export interface AdminParts {
  operator: OperatorService;
  live: LiveConfig;
  metrics: GatewayMetrics;
  series: ConsoleSeries;
  degraded: () => ReadonlyArray<Record<string, unknown>>;
}

export interface AdminListener {
  admin?: Server;
  adminUrl?: string;
  ops?: OperatorConsole;
}

export async function startAdminListener(config: Config, deps: { store: Store; logger: Logger }, composed: AdminParts): Promise<AdminListener> {
  const { store, logger } = deps;
  if (!(config.operators.length > 0 || config.metrics.enabled === true)) {
    logger.info('no operators configured: the operator API is not started');
    return {};
  }
  // /metrics before the operator routes: it needs no operator key (README "Metrics").
  const metrics = config.metrics.enabled === false ? [] : [composed.metrics.router()];
  // The console shares the operator listener: never reachable on the public port.
  // One throttle for both ways an operator key is presented: the console's sign-in and the API (issue #25 item 19).
  const throttle = new AuthThrottle(config.authThrottle);
  const ops = config.operators.length > 0 ? new OperatorConsole({ service: composed.operator, store, spaceId: config.spaceId, operators: config.operators, logger, series: composed.series, throttle }) : undefined;
  const routers = [...metrics, ...(ops ? [ops.router] : []), operatorRouter({ service: composed.operator, live: composed.live, operators: config.operators, logger, throttle })];
  const guard = hostCheck(config.admin.host, config.admin.allowedHosts);
  const admin = createListener(config.server, createApp({ store, logger, degraded: composed.degraded, observe: (l) => composed.metrics.request(l), routers, guard }));
  try {
    return { admin, adminUrl: await listen(admin, config.admin.port, config.admin.host), ...(ops ? { ops } : {}) };
  } catch (err) {
    admin.close();
    throw err;
  }
}
