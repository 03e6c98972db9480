/** The server's own counters for `/metrics` (Prometheus text format 0.0.4): HTTP requests by route and code. */

export class HttpMetrics {
  readonly #requests = new Map<string, number>();

  count(method: string, route: string, status: number): void {
    const key = `${method}\u0000${route}\u0000${status}`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
  }

  /** The metrics text: the HTTP counters and the `gauges` given (name → help, type and labelled values). */
  render(gauges: readonly Gauge[]): string {
    const lines: string[] = [
      "# HELP hermes_http_requests_total HTTP requests answered, by method, route and status code.",
      "# TYPE hermes_http_requests_total counter",
    ];
    for (const [key, value] of [...this.#requests].sort()) {
      const [method, route, code] = key.split("\u0000");
      lines.push(
        `hermes_http_requests_total{method="${method}",route="${escape(route!)}",code="${code}"} ${value}`,
      );
    }
    for (const gauge of gauges) {
      lines.push(`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} ${gauge.type}`);
      for (const [labels, value] of gauge.values) {
        const text = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`).join(",");
        lines.push(`${gauge.name}${text ? `{${text}}` : ""} ${value}`);
      }
    }
    return lines.join("\n") + "\n";
  }
}

export interface Gauge {
  name: string;
  help: string;
  type: "gauge" | "counter";
  values: [Record<string, string>, number][];
}

function escape(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
