/** The `loops:` and `heartbeat:` settings (docs/job-file.md) in milliseconds, with the contract's defaults. */
import { parseDuration } from "../runtime/core/duration.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import type { HeartbeatConfig, LoopsConfig } from "../runtime/config/job_schema.ts";

export interface RecurringSettings {
  loop_min_interval_ms: number;
  max_ticks: number;
  self_paced_floor_ms: number;
  self_paced_ceiling_ms: number;
  heartbeat_min_interval_ms: number;
}

export const DEFAULT_SETTINGS: Readonly<RecurringSettings> = {
  loop_min_interval_ms: 30_000,
  max_ticks: 100,
  self_paced_floor_ms: 60_000,
  self_paced_ceiling_ms: 15 * 60_000,
  heartbeat_min_interval_ms: 60_000,
};

export function resolveSettings(loops?: LoopsConfig, heartbeat?: HeartbeatConfig): RecurringSettings {
  const ms = (key: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const parsed = parseDuration(value);
    if (parsed <= 0) throw new ValidationError(`Invalid ${key} "${value}": expected a duration above zero`);
    return parsed;
  };
  const settings: RecurringSettings = {
    loop_min_interval_ms: ms(
      "loops.min_interval",
      loops?.min_interval,
      DEFAULT_SETTINGS.loop_min_interval_ms,
    ),
    max_ticks: loops?.max_ticks ?? DEFAULT_SETTINGS.max_ticks,
    self_paced_floor_ms: ms(
      "loops.self_paced_floor",
      loops?.self_paced_floor,
      DEFAULT_SETTINGS.self_paced_floor_ms,
    ),
    self_paced_ceiling_ms: ms(
      "loops.self_paced_ceiling",
      loops?.self_paced_ceiling,
      DEFAULT_SETTINGS.self_paced_ceiling_ms,
    ),
    heartbeat_min_interval_ms: ms(
      "heartbeat.min_interval",
      heartbeat?.min_interval,
      DEFAULT_SETTINGS.heartbeat_min_interval_ms,
    ),
  };
  // The floor obeys min_interval too, and the ceiling is never below the floor.
  settings.self_paced_floor_ms = Math.max(settings.self_paced_floor_ms, settings.loop_min_interval_ms);
  settings.self_paced_ceiling_ms = Math.max(settings.self_paced_ceiling_ms, settings.self_paced_floor_ms);
  return settings;
}
