/**
 * OpenTelemetry tracing (issue #17). The code speaks only
 * `@opentelemetry/api`: without an SDK every span is a no-op and no
 * `traceparent` is sent. `tracing.enabled` installs the Node SDK with an
 * OTLP/HTTP exporter, the W3C trace-context propagator and the
 * AsyncLocalStorage context manager, so one request's steps nest under its
 * span and each upstream call carries its own span as the delegatee's parent.
 *
 * Attributes are Baton's own ids and closed vocabularies (binding, operation,
 * outcome, ADR-0014 code) — never a credential, a message, an artifact or a
 * remote's error text (RW-003 §9 minimal data).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, INVALID_SPAN_CONTEXT, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import { isBatonError } from '../errors.ts';
import { VERSION } from '../version.ts';
import type { TracingConfig } from './config.ts';

export const tracer = () => trace.getTracer('baton', VERSION);

/**
 * Whether `startTracing` installed the SDK. Without it every span is the API's
 * no-op, so the request path skips making them (issue #15: the no-op wrapper
 * was measurable per request) and hands `fn` one shared non-recording span.
 */
let installed = false;
const NOOP_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `fn` in a span named `name`, a child of the active one; records an error by its ADR-0014 code only.
 * `raced` names an error its caller handles by trying again (a store conflict: errors.ts isConflict): the span
 * then ends as `baton.raced` with that name, not as failed, and the retry's own span follows it.
 */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, raced?: (err: unknown) => string | undefined): Promise<T> {
  if (!installed) return fn(NOOP_SPAN);
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      const race = raced?.(err);
      if (race === undefined) failed(span, err);
      else span.setAttribute('baton.raced', race);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A turn's Baton ids as span attributes (ids only: RW-003 §9). */
export function turnIds(turn: { attempt: { body: { attempt_id: string; delegatee_id: string; delegation_ref: { object_id: string } } }; effect_id: string; reservation_id: string }): Attributes {
  const a = turn.attempt.body;
  return { 'baton.attempt_id': a.attempt_id, 'baton.delegatee': a.delegatee_id, 'baton.delegation_id': a.delegation_ref.object_id, 'baton.effect_id': turn.effect_id, 'baton.reservation_id': turn.reservation_id };
}

/** Marks a span failed with the error's ADR-0014 code (or its class name); the message may quote a remote, so it is left out. */
export function failed(span: Span, err: unknown): void {
  const code = isBatonError(err) ? err.code : err instanceof Error ? err.name : 'error';
  span.setAttribute('baton.error_code', code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/** Adds the W3C trace context of the active span to outgoing headers (a no-op until an SDK is installed). */
export function withTraceContext(headers: Record<string, string>): Record<string, string> {
  if (installed) propagation.inject(context.active(), headers);
  return headers;
}

export interface Tracing {
  /** Flushes what is buffered and uninstalls the SDK. */
  shutdown(): Promise<void>;
}

/**
 * Installs the SDK when `tracing.enabled` (process-wide: the API's globals).
 * A gateway closing uninstalls it, so tests can start one after another.
 * `exporter` replaces OTLP (tests use an in-memory one, exported span by span).
 */
export async function startTracing(config: TracingConfig, exporter?: SpanExporter): Promise<Tracing | undefined> {
  if (!config.enabled) return undefined;
  // Loaded only when enabled: a gateway without tracing never loads the SDK.
  const [{ BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, SimpleSpanProcessor, TraceIdRatioBasedSampler }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const processor = exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(new OTLPTraceExporter(config.endpoint ? { url: config.endpoint } : {}));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': VERSION }),
    // A caller's sampling decision is followed; new traces are sampled at the configured ratio.
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [processor],
  });
  provider.register();
  installed = true;
  return {
    shutdown: async () => {
      installed = false;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/**
 * Middleware opening the one span of an A2A request (`baton.request`,
 * continuing the caller's W3C trace when it sent one); every step below runs
 * in its context. Request and response emitters are bound to it as well
 * (defensive: listeners added by body parsers then run in the request's
 * context whatever context emits the event).
 */
export function requestSpan(binding: string, delegatee: string | undefined) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (!installed) return next();
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer().startSpan('baton.request', { kind: SpanKind.SERVER, attributes: { 'baton.binding': binding, ...(delegatee ? { 'baton.delegatee': delegatee } : {}), 'http.request.method': req.method ?? 'GET' } }, parent);
    const ctx = trace.setSpan(parent, span);
    context.bind(ctx, req);
    context.bind(ctx, res);
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(ctx, next);
  };
}
