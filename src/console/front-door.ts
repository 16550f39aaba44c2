/**
 * Feeds the console's charts from the A2A front door: every SendMessage
 * (JSON-RPC or HTTP+JSON, streaming or not) counts as admitted or refused by
 * its ADR-0014 code, and its latency is kept. Mounted first on the public
 * app; it only listens for the response to finish.
 */
import { Router } from 'express';
import { errorCodeOfResponse } from '../http/access-log.ts';
import type { ConsoleSeries } from './series.ts';

const SEND = /^(SendMessage|SendStreamingMessage|message\/send|message\/stream)$/;

export function frontDoorSeries(series: ConsoleSeries): Router {
  const r = Router();
  r.use((req, res, next) => {
    const path = req.path;
    const rest = /\/a2a\/rest\/.*message:(send|stream)$/.test(path);
    if (!rest && !path.endsWith('/a2a/jsonrpc')) return next();
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const method = (req.body as { method?: unknown } | undefined)?.method;
      if (!rest && !(typeof method === 'string' && SEND.test(method))) return;
      const code = errorCodeOfResponse(res);
      series.count(code ? `refused: ${code}` : 'admitted');
      if (!code) series.latency('SendMessage', Number(process.hrtime.bigint() - started) / 1e6);
    });
    next();
  });
  return r;
}
