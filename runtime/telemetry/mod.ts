/**
 * OpenTelemetry for Hermes: off and not loaded unless settings.ts finds a collector. A front-end starts it
 * once per process, attaches each event bus it runs sessions on, and shuts it down (which exports what is
 * buffered) before the process exits.
 */
import type { EventBus } from "../core/events.ts";
import type { TelemetrySettings } from "./settings.ts";

export { type TelemetryConfig, type TelemetrySettings, telemetrySettings } from "./settings.ts";

export interface TelemetryOptions {
  /** Hermes's version (`service.version`). */
  version: string;
  /**
   * The run's labels (`hermes run`: one session per process), exported as resource attributes
   * `hermes.label.KEY`, so a collector can group spans and metrics by repository, workflow, run or PR.
   */
  labels?: Readonly<Record<string, string>>;
  warn?: (message: string) => void;
}

export interface Telemetry {
  /**
   * Turns a bus's events into spans and metrics; the returned function stops that and ends the bus's open
   * spans at the given time. `resultEndsSession`: a job run (`hermes run`, a daemon's slot) ends its session
   * span at its result event, which follows `session.end`.
   */
  attach(bus: EventBus, options: { resultEndsSession: boolean }): (at: Date) => void;
  /** Exports what is buffered now (after each daemon run). */
  flush(): Promise<void>;
  /** Ends open spans at `at`, exports what is buffered, and stops. */
  shutdown(at: Date): Promise<void>;
}

export async function startTelemetry(
  settings: TelemetrySettings | undefined,
  options: TelemetryOptions,
): Promise<Telemetry | undefined> {
  if (!settings) return undefined;
  const { startOtel } = await import("./otel.ts");
  return startOtel(settings, options);
}
