/**
 * Whether and where telemetry goes. Off unless the standard OTLP variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * or the per-signal `…_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT`) or `telemetry:` in config.yaml name a
 * collector; the variables win over config.yaml, as they do for every OpenTelemetry SDK.
 */
import { ValidationError } from "../core/errors.ts";
import type { CredentialEnv } from "../core/redact.ts";

/** The variables the exporter reads credentials from (collector tokens travel as headers). */
export const TELEMETRY_CREDENTIAL_ENV: readonly CredentialEnv[] = [
  { name: "OTEL_EXPORTER_OTLP_HEADERS", form: "header_values" },
];

/** `telemetry:` in config.yaml. */
export interface TelemetryConfig {
  endpoint?: string | undefined;
  headers?: Record<string, string> | undefined;
  service_name?: string | undefined;
  capture_content?: boolean | undefined;
}

export interface TelemetrySettings {
  /** Full URLs of the OTLP/HTTP traces and metrics endpoints. */
  tracesUrl: string;
  metricsUrl: string;
  headers: Record<string, string>;
  serviceName: string;
  /** Prompt text, answers and tool arguments on spans (off: only names, counts and durations). */
  captureContent: boolean;
}

/** The settings in force, or undefined when telemetry is off. */
export function telemetrySettings(
  env: Record<string, string>,
  config: TelemetryConfig | undefined,
): TelemetrySettings | undefined {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === "true") return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || config?.endpoint;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (base && signalUrl(base, "traces"));
  const metrics = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || (base && signalUrl(base, "metrics"));
  if (!traces && !metrics) return undefined;
  for (const name of ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]) {
    const protocol = env[name];
    if (protocol && protocol !== "http/json") {
      throw new ValidationError(
        `Cannot export telemetry over ${name}=${protocol}: Hermes sends OTLP as http/json; set ${name}=http/json ` +
          "and point the endpoint at the collector's HTTP port (4318 by default)",
      );
    }
  }
  for (const [name, url] of [["traces", traces], ["metrics", metrics]] as const) {
    if (url && !/^https?:\/\/[^/]/.test(url)) {
      throw new ValidationError(
        `Cannot export telemetry: the ${name} endpoint "${url}" is not an http(s) URL`,
      );
    }
  }
  return {
    tracesUrl: traces || "",
    metricsUrl: metrics || "",
    headers: { ...config?.headers, ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS ?? "") },
    serviceName: env.OTEL_SERVICE_NAME || config?.service_name || "hermes",
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
      ? env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT.toLowerCase() === "true"
      : config?.capture_content ?? false,
  };
}

/** The spec's rule: a base endpoint gets `/v1/<signal>` appended. */
function signalUrl(base: string, signal: "traces" | "metrics"): string {
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

/** `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`, values URL-encoded. */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}
