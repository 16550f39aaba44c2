/**
 * Feeds the console's charts from the A2A front door: every SendMessage
 * (JSON-RPC or HTTP+JSON, streaming or not) counts as admitted or refused by
 * its ADR-0014 code, and its latency is kept (the whole call as the caller
 * waits for it: the delegatee's round trips and read-back included). Mounted first on the public
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
      const code = errorCodeOfResponse(res);
      // A refused credential's body is never read: its JSON-RPC method is unknown, and it still counts as a refusal.
      if (code && (rest || method === undefined || (typeof method === 'string' && SEND.test(method)))) return series.count(`refused: ${code}`);
      if (code || !(rest || (typeof method === 'string' && SEND.test(method)))) return;
      series.count('admitted');
      series.latency('SendMessage', Number(process.hrtime.bigint() - started) / 1e6);
    });
    next();
  });
  return r;
}
