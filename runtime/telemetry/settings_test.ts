import assert from "node:assert/strict";
import { ValidationError } from "../core/errors.ts";
import { telemetrySettings } from "./settings.ts";

Deno.test("telemetrySettings: off unless an endpoint is named; OTEL_SDK_DISABLED wins", () => {
  assert.equal(telemetrySettings({}, undefined), undefined);
  assert.equal(telemetrySettings({}, { capture_content: true }), undefined);
  assert.equal(
    telemetrySettings({ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }, undefined),
    undefined,
  );
});

Deno.test("telemetrySettings: a base endpoint gets /v1/traces and /v1/metrics; per-signal ones are used as given", () => {
  const base = telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }, undefined)!;
  assert.equal(base.tracesUrl, "http://c:4318/v1/traces");
  assert.equal(base.metricsUrl, "http://c:4318/v1/metrics");
  assert.equal(base.serviceName, "hermes");
  assert.equal(base.captureContent, false);
  const traces = telemetrySettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t/x" }, undefined)!;
  assert.deepEqual([traces.tracesUrl, traces.metricsUrl], ["https://t/x", ""]);
});

Deno.test("telemetrySettings: the environment wins over config.yaml; headers merge, decoded", () => {
  const settings = telemetrySettings(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%2Cb, x=1",
      OTEL_SERVICE_NAME: "svc",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "false",
    },
    {
      endpoint: "http://config:4318",
      headers: { x: "0", y: "2" },
      service_name: "cfg",
      capture_content: true,
    },
  )!;
  assert.equal(settings.tracesUrl, "http://env:4318/v1/traces");
  assert.deepEqual(settings.headers, { "api-key": "a,b", x: "1", y: "2" });
  assert.equal(settings.serviceName, "svc");
  assert.equal(settings.captureContent, false);
  const config = telemetrySettings({}, { endpoint: "http://config:4318", capture_content: true })!;
  assert.deepEqual([config.tracesUrl, config.captureContent], ["http://config:4318/v1/traces", true]);
});

Deno.test("telemetrySettings: grpc or protobuf, or an endpoint that is no URL, is a clear error", () => {
  for (const protocol of ["grpc", "http/protobuf"]) {
    assert.throws(
      () =>
        telemetrySettings({
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317",
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        }, {}),
      (error) =>
        error instanceof ValidationError && error.message.includes(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}`),
    );
  }
  assert.ok(
    telemetrySettings(
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
      {},
    ),
  );
  assert.throws(
    () => telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, undefined),
    /the traces endpoint "collector:4318\/v1\/traces" is not an http\(s\) URL/,
  );
});

Deno.test("the OpenTelemetry SDK is reached only through mod.ts's dynamic import", async () => {
  const root = new URL("../../", import.meta.url).pathname;
  const offenders: string[] = [];
  const visit = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        if (!/^(\.|dist$|node_modules$|tests$|bench$)/.test(entry.name)) await visit(path);
      } else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
        const text = await Deno.readTextFile(path);
        const rel = path.slice(root.length);
        const sdk = /from "@opentelemetry\//.test(text);
        const otel = /(?:from|import)\s*\(?\s*"\.\/otel\.ts"/.test(text);
        if (sdk && !["runtime/telemetry/otel.ts", "runtime/telemetry/event_spans.ts"].includes(rel)) {
          offenders.push(`${rel} imports @opentelemetry`);
        }
        if (/from "\.\/(otel|event_spans)\.ts"/.test(text) && rel !== "runtime/telemetry/otel.ts") {
          offenders.push(`${rel} imports the SDK's modules statically`);
        }
        if (otel && rel === "runtime/telemetry/mod.ts" && !/await import\("\.\/otel\.ts"\)/.test(text)) {
          offenders.push("mod.ts imports otel.ts statically");
        }
      }
    }
  };
  await visit(root.replace(/\/$/, ""));
  assert.deepEqual(offenders, []);
});
