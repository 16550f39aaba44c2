/**
 * Structured logs (pino). Redaction is by path and applies to every logger,
 * so a header, key or token that slips into a log object is censored before
 * it is serialised.
 */
import { pino, type Logger } from 'pino';

export const REDACT_PATHS = [
  'authorization',
  'password',
  'secret',
  'token',
  'apiKey',
  'privateKey',
  'privateJwk',
  'credentials',
  '*.authorization',
  '*.password',
  '*.secret',
  '*.token',
  '*.apiKey',
  '*.privateKey',
  '*.privateJwk',
  '*.credentials',
  '*.d',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'headers["x-a2a-notification-token"]',
  '*.headers["x-a2a-notification-token"]',
  'sealed_credentials',
  '*.sealed_credentials',
];

export type { Logger };

export function createLogger(opts: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const options = { level: opts.level ?? 'info', redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'baton' } };
  return opts.destination ? pino(options, opts.destination as pino.DestinationStream) : pino(options);
}
