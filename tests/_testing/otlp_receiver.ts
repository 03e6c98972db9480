/**
 * A local OpenTelemetry collector for tests: takes OTLP/HTTP JSON exports on /v1/traces and /v1/metrics (as
 * the OTLP specification defines them) and decodes spans and metric points with their attributes.
 */

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  resource: Record<string, unknown>;
}

export interface ReceivedPoint {
  metric: string;
  unit: string;
  attributes: Record<string, unknown>;
  /** A counter's value, or a histogram's sum. */
  value: number;
  count: number;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  /** Raw request bodies, to check what never reached the collector. */
  bodies: string[];
  headers: Headers[];
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return null;
}

function attributes(list: { key: string; value: AnyValue }[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

const nanosToMs = (n: string | number) => Number(BigInt(n) / 1_000_000n);

export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const bodies: string[] = [];
  const headers: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    const text = await request.text();
    bodies.push(text);
    headers.push(request.headers);
    if (request.method !== "POST" || request.headers.get("content-type") !== "application/json") {
      return new Response("expected a POST of application/json", { status: 415 });
    }
    const body = JSON.parse(text);
    if (path === "/v1/traces") {
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              kind: s.kind,
              startMs: nanosToMs(s.startTimeUnixNano),
              endMs: nanosToMs(s.endTimeUnixNano),
              attributes: attributes(s.attributes),
              status: s.status ?? {},
              events: (s.events ?? []).map((e: { name: string; attributes?: [] }) => ({
                name: e.name,
                attributes: attributes(e.attributes),
              })),
              resource,
            });
          }
        }
      }
    } else if (path === "/v1/metrics") {
      for (const rm of body.resourceMetrics ?? []) {
        for (const sm of rm.scopeMetrics ?? []) {
          for (const m of sm.metrics ?? []) {
            const data = m.sum ?? m.histogram ?? m.gauge;
            for (const p of data?.dataPoints ?? []) {
              points.push({
                metric: m.name,
                unit: m.unit ?? "",
                attributes: attributes(p.attributes),
                value: p.asDouble ?? (p.asInt !== undefined ? Number(p.asInt) : p.sum ?? 0),
                count: p.count !== undefined ? Number(p.count) : 1,
              });
            }
          }
        }
      }
    } else {
      return new Response("not found", { status: 404 });
    }
    return Response.json({});
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    points,
    bodies,
    headers,
    close: () => server.shutdown(),
  };
}
