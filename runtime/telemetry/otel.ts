/**
 * The OpenTelemetry SDK, wired: traces and metrics over OTLP/HTTP (JSON) with the official packages. The only
 * module that loads them, and only imported when telemetry is on (mod.ts).
 */
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { EventBus } from "../core/events.ts";
import { type EventSpans, eventSpans, instruments } from "./event_spans.ts";
import type { Telemetry, TelemetryOptions } from "./mod.ts";
import type { TelemetrySettings } from "./settings.ts";

/** A long-running daemon or server exports metrics this often; a one-shot run exports them at its end. */
const METRICS_INTERVAL_MS = 60_000;
/** How long an export may take, retries included: a collector that is down delays exit by this, at most. */
const EXPORT_TIMEOUT_MS = 3_000;

export function startOtel(settings: TelemetrySettings, options: TelemetryOptions): Telemetry {
  const resource = resourceFromAttributes({
    "service.name": settings.serviceName,
    "service.version": options.version,
    ...Object.fromEntries(
      Object.entries(options.labels ?? {}).map(([key, value]) => [`hermes.label.${key}`, value]),
    ),
  });
  const exporter = { headers: settings.headers, timeoutMillis: EXPORT_TIMEOUT_MS };
  const tracerProvider = new TracerProvider({
    resource,
    spanProcessors: settings.tracesUrl
      ? [
        new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.tracesUrl, ...exporter }) }),
      ]
      : [],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: settings.metricsUrl
      ? [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: settings.metricsUrl, ...exporter }),
          exportIntervalMillis: METRICS_INTERVAL_MS,
        }),
      ]
      : [],
  });
  const tracer = tracerProvider.getTracer("hermes", options.version);
  const metrics = instruments(meterProvider.getMeter("hermes", options.version));
  const attached = new Map<EventBus, { spans: EventSpans; unsubscribe: () => void }>();
  const detach = (bus: EventBus, at: Date) => {
    const entry = attached.get(bus);
    if (!entry) return;
    attached.delete(bus);
    entry.unsubscribe();
    entry.spans.close(at);
  };
  // Exporting must not fail a run: a collector that is down costs the spans, nothing else.
  const settle = async (work: Promise<unknown>[]) => {
    const failed = (await Promise.allSettled(work)).find((r): r is PromiseRejectedResult =>
      r.status === "rejected"
    );
    if (failed) options.warn?.(`telemetry: could not export to the collector: ${String(failed.reason)}`);
  };
  return {
    attach(bus, { resultEndsSession }) {
      const spans = eventSpans(tracer, metrics, {
        captureContent: settings.captureContent,
        resultEndsSession,
      });
      attached.set(bus, { spans, unsubscribe: bus.subscribe(spans.onEvent) });
      return (at) => detach(bus, at);
    },
    flush: () => settle([tracerProvider.forceFlush(), meterProvider.forceFlush()]),
    async shutdown(at) {
      for (const bus of [...attached.keys()]) detach(bus, at);
      await settle([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
