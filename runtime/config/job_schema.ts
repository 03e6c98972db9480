/** The job-file schema (DESIGN §3): one zod schema gives types, validation and `hermes schema`. */
import { z } from "zod";

const durationPattern = /^\s*(\d+(\.\d+)?\s*(ms|s|m|h|d)\s*)+$/;
export const Duration = z.string().regex(durationPattern, "expected a duration like 30s, 5m or 1h30m");
const Size = z.union([
  z.number().int().positive(),
  z.string().regex(/^\s*\d+(\.\d+)?\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$/i, "expected a size like 64KiB or 256MB"),
]);
const Name = z.string().regex(/^[a-z0-9._-]+$/, "expected lower-case letters, digits, '.', '_' or '-'");

export const ModelConfig = z.strictObject({
  provider: z.enum(["openai", "scripted"]).optional(),
  name: z.string().min(1).optional(),
  base_url: z.url().optional(),
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  context_window: z.number().int().positive().optional(),
  max_output_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  script: z.string().min(1).optional(),
  stream: z.boolean().optional(),
  request_timeout: Duration.optional(),
  max_retries: z.number().int().min(0).max(10).optional(),
});

const PathList = z.array(z.string().min(1));
export const ToolsConfig = z.strictObject({
  shell: z.strictObject({
    allow: z.array(z.string().min(1)).optional(),
    deny: z.array(z.string().min(1)).optional(),
    cwd: z.string().optional(),
    timeout: Duration.optional(),
    max_output: Size.optional(),
  }).optional(),
  read_file: z.strictObject({ paths: PathList.optional(), max_bytes: Size.optional() }).optional(),
  write_file: z.strictObject({ paths: PathList.optional(), max_bytes: Size.optional() }).optional(),
  list_dir: z.strictObject({
    paths: PathList.optional(),
    max_entries: z.number().int().positive().optional(),
  })
    .optional(),
  http_fetch: z.strictObject({
    hosts: z.array(z.string().min(1)).optional(),
    timeout: Duration.optional(),
    max_output: Size.optional(),
  }).optional(),
});

const Grant = z.union([z.boolean(), z.array(z.string())]);
export const PluginEntry = z.strictObject({
  path: z.string().min(1),
  permissions: z.strictObject({
    read: Grant.optional(),
    write: Grant.optional(),
    net: Grant.optional(),
    env: Grant.optional(),
    run: Grant.optional(),
    ffi: Grant.optional(),
    sys: Grant.optional(),
  }).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  hook_timeout: Duration.optional(),
  max_memory: Size.optional(),
  isolation: z.enum(["subprocess", "worker"]).optional(),
});

export const InputSpec = z.strictObject({
  type: z.enum(["string", "number", "boolean"]).optional(),
  required: z.boolean().optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  description: z.string().optional(),
});

export const LimitsConfig = z.strictObject({
  max_turns: z.number().int().positive().optional(),
  timeout: Duration.optional(),
  max_tokens: z.number().int().positive().optional(),
});

export const CompactionConfig = z.strictObject({
  enabled: z.boolean().optional(),
  threshold: z.number().gt(0).max(1).optional(),
  protect_first: z.number().int().min(0).optional(),
  protect_last: z.number().int().min(1).optional(),
  summary_model: z.string().min(1).optional(),
  prune_tool_results: z.boolean().optional(),
  summary_timeout: Duration.optional(),
});

export const LoopsConfig = z.strictObject({
  min_interval: Duration.optional(),
  max_ticks: z.number().int().positive().optional(),
  self_paced_floor: Duration.optional(),
  self_paced_ceiling: Duration.optional(),
});

export const HeartbeatConfig = z.strictObject({ min_interval: Duration.optional() });

export const ScheduleConfig = z.strictObject({
  cron: z.string().min(1),
  timezone: z.string().min(1).optional(),
  catch_up: z.enum(["one", "none"]).optional(),
});

export const OutputConfig = z.strictObject({
  format: z.enum(["text", "json", "stream-json"]).optional(),
  file: z.string().min(1).optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
});

export const JobFile = z.strictObject({
  $schema: z.string().optional(),
  name: Name,
  description: z.string().optional(),
  model: ModelConfig.optional(),
  system: z.string().optional(),
  inputs: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/), InputSpec).optional(),
  env: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  prompt: z.string().optional(),
  steps: z.array(z.string().min(1)).optional(),
  tools: ToolsConfig.optional(),
  plugins: z.array(PluginEntry).optional(),
  limits: LimitsConfig.optional(),
  compaction: CompactionConfig.optional(),
  loops: LoopsConfig.optional(),
  heartbeat: HeartbeatConfig.optional(),
  schedule: ScheduleConfig.optional(),
  output: OutputConfig.optional(),
});

/** `HERMES_HOME/config.yaml`: user-wide defaults. */
export const UserConfig = z.strictObject({
  model: ModelConfig.optional(),
  tools: ToolsConfig.optional(),
  plugins: z.array(PluginEntry).optional(),
  limits: LimitsConfig.optional(),
  compaction: CompactionConfig.optional(),
  loops: LoopsConfig.optional(),
  heartbeat: HeartbeatConfig.optional(),
});

export type JobFile = z.infer<typeof JobFile>;
export type UserConfig = z.infer<typeof UserConfig>;
export type ModelConfig = z.infer<typeof ModelConfig>;
export type ToolsConfig = z.infer<typeof ToolsConfig>;
export type PluginEntry = z.infer<typeof PluginEntry>;
export type LimitsConfig = z.infer<typeof LimitsConfig>;
export type CompactionConfig = z.infer<typeof CompactionConfig>;
export type LoopsConfig = z.infer<typeof LoopsConfig>;
export type HeartbeatConfig = z.infer<typeof HeartbeatConfig>;
export type ScheduleConfig = z.infer<typeof ScheduleConfig>;
export type OutputConfig = z.infer<typeof OutputConfig>;
export type InputSpec = z.infer<typeof InputSpec>;

/** JSON Schema for editors (`# yaml-language-server: $schema=…`). */
export function jobJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(JobFile, { target: "draft-2020-12", io: "input" }),
    $id: "https://hermes.dev/schema/job.json",
    title: "Hermes job file",
  };
}
