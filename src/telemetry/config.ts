/** Configuration of metrics and tracing (README "Metrics", "Tracing"). */
import { z } from 'zod';

export const MetricsConfig = z
  .strictObject({
    /**
     * `/metrics` on the operator listener. Unset: served whenever that
     * listener runs (operators configured). `true`: also starts the listener
     * for metrics alone when no operators are configured. `false`: not served.
     */
    enabled: z.boolean().optional(),
  })
  .prefault({});

export const TracingConfig = z
  .strictObject({
    /** Off by default: no SDK is loaded and every span is a no-op. */
    enabled: z.boolean().default(false),
    /** OTLP/HTTP traces endpoint; unset: the exporter's default (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318/v1/traces). */
    endpoint: z.url().optional(),
    /** `service.name` of the spans. */
    serviceName: z.string().min(1).max(128).default('baton'),
    /** Fraction of new traces sampled (a caller's sampled traceparent is always followed). */
    sampleRatio: z.number().min(0).max(1).default(1),
  })
  .prefault({});

export type MetricsConfig = z.infer<typeof MetricsConfig>;
export type TracingConfig = z.infer<typeof TracingConfig>;
