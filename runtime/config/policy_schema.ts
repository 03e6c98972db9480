/**
 * A trust policy: the host's bounds on what a job file may ask for (`--policy FILE`, `HERMES_POLICY`, or
 * `policy:` in config.yaml). Every key is optional; an absent key does not bound. Patterns match parsed
 * values (policy_match.ts): URLs part by part, hosts as host rules, names with `*` as "anything"; paths are
 * roots (relative ones resolve against the policy file's directory).
 */
import { z } from "zod";
import { HOST_PATTERN, HOST_PATTERN_EXPECTED, URL_PATTERN, URL_PATTERN_EXPECTED } from "./policy_match.ts";

// As job_schema.ts's (which imports this module's types, so this one cannot import them).
const Duration = z.string().regex(
  /^\s*(\d+(\.\d+)?\s*(ms|s|m|h|d)\s*)+$/,
  "expected a duration like 30s, 5m or 1h30m",
);
const Size = z.union([
  z.number().int().positive(),
  z.string().regex(/^\s*\d+(\.\d+)?\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$/i, "expected a size like 64KiB or 256MB"),
]);
const Patterns = z.array(z.string().min(1));
const UrlPatterns = z.array(z.string().regex(URL_PATTERN, URL_PATTERN_EXPECTED));
const HostPatterns = z.array(z.string().regex(HOST_PATTERN, HOST_PATTERN_EXPECTED));
const Roots = z.array(z.string().min(1));

export const PolicyConfig = z.strictObject({
  models: z.strictObject({
    base_urls: UrlPatterns.describe(
      'model.base_url a job may name, e.g. "https://api.openai.com/*" or "https://*.openai.azure.com/*" (scheme, host, port and path compared apart; * in the host is one label) ([]: none — the endpoint comes from config.yaml or the environment)',
    ).optional(),
    api_key_envs: Patterns.describe("model.api_key_env names a job may name ([]: none)").optional(),
  }).describe("Model endpoints a job may send its key and transcript to").optional(),
  env: Patterns.describe(
    "Environment variables a job may read: {{ env.NAME }} anywhere, MCP env pass-through, plugin env grants ([]: none)",
  ).optional(),
  steering_env: Patterns.describe(
    "Names a job's env: (and an MCP server's env: mapping) may set although they steer programs (PATH, LD_*, " +
      "BASH_ENV, HERMES_*, DENO_*, NODE_OPTIONS, GIT_CONFIG_*, …: docs/sandbox.md); under any policy the others are refused",
  ).optional(),
  protect_job: z.boolean().describe(
    "Keep the job's repository .git, its job file, the *.yaml/*.yml/*.json files at the top of its directory " +
      "and the files it loads or runs read-only for every writer (write_file, output.file, shell, plugin and " +
      "MCP sandboxes), and refuse sandbox: off (--untrusted: true). Default false",
  ).optional(),
  repository_instructions: z.boolean().describe(
    "May a job's system prompt get the repository's AGENTS.md files and the skills of its .agents/skills? " +
      "Default true (under --untrusted too, marked as repository content, not instructions: docs/workspaces.md)",
  ).optional(),
  sandbox_off: z.boolean().describe(
    "May a job turn an OS sandbox off (tools.shell.sandbox, plugins' sandbox or isolation: worker, MCP servers' sandbox)? Default true",
  ).optional(),
  read: Roots.describe(
    "Roots every read grant of a job must lie under (file tools, shell sandbox read, plugin and MCP read grants)",
  ).optional(),
  write: Roots.describe(
    "Roots every write grant of a job must lie under (write_file, shell sandbox write, plugin and MCP write grants)",
  ).optional(),
  network: z.strictObject({
    sandbox: z.boolean().describe(
      "May a shell sandbox or an MCP server's sandbox have the host's network (net: true)? Default true",
    ).optional(),
    hosts: HostPatterns.describe(
      "Hosts (host, host:port, *.example.com for the names below it, or * alone) http_fetch, plugin net grants and sandbox host lists may name; a job's entry must be covered whole ([]: none)",
    ).optional(),
  }).describe("Network a job may grant its tools, plugins and servers").optional(),
  plugins: Roots.describe("Roots a job's plugin paths must lie under ([]: no plugins)").optional(),
  mcp: z.strictObject({
    commands: Patterns.describe('Commands a job\'s stdio MCP servers may run, e.g. "npx" ([]: none)')
      .optional(),
    urls: UrlPatterns.describe("URL patterns a job's HTTP MCP servers may use ([]: none)").optional(),
  }).describe("MCP servers a job may start or reach").optional(),
  approval: z.strictObject({
    commands: Patterns.describe(
      "Programs a job's approval.command may name ([]: none; it runs on the host, outside the sandbox)",
    ).optional(),
    urls: UrlPatterns.describe("URL patterns a job's approval.url may post tool calls to ([]: none)")
      .optional(),
  }).describe("Approvers a job may name for tool calls outside its rules").optional(),
  notify: z.strictObject({
    commands: Patterns.describe(
      "Programs a job's notify command may name ([]: none; it runs on the worker's host)",
    ).optional(),
    urls: UrlPatterns.describe("URL patterns a job's notify url may post run records to ([]: none)")
      .optional(),
  }).describe("Completion notifications a job may send").optional(),
  limits: z.strictObject({
    max_turns: z.number().int().positive().describe("Ceiling of limits.max_turns").optional(),
    timeout: Duration.describe("Ceiling of limits.timeout").optional(),
    max_tokens: z.number().int().positive().describe("Ceiling of limits.max_tokens").optional(),
  }).describe("Ceilings of a job's limits (also applied when the job sets none)").optional(),
  sandbox_limits: z.strictObject({
    processes: z.number().int().min(8).describe("Ceiling of sandbox.limits.processes").optional(),
    memory: Size.describe("Ceiling of sandbox.limits.memory, and of a plugin's max_memory").optional(),
    file_size: Size.describe("Ceiling of sandbox.limits.file_size").optional(),
    tmp: Size.describe("Ceiling of sandbox.limits.tmp").optional(),
    max_output: Size.describe(
      "Ceiling of each tool result Hermes keeps: tools.shell.max_output, tools.read_file.max_bytes and " +
        "tools.http_fetch.max_output",
    ).optional(),
    max_session_output: Size.describe(
      "Most bytes of tool results Hermes stores for one session, all calls and runs together: past it a " +
        "result is stored cut to what is left (its head and tail around a marker), then as the marker alone",
    ).optional(),
  }).describe(
    "Ceilings of the resource limits of a job's shell sandbox and MCP servers' sandboxes (applied when the job sets none and the default is above them; with any of them, a job may not turn a sandbox off)",
  ).optional(),
});

export type PolicyConfig = z.infer<typeof PolicyConfig>;

/** A policy with where it came from, for messages. */
export interface Policy {
  rules: PolicyConfig;
  /** `policy FILE`, `config.yaml policy`, `--untrusted`. */
  source: string;
  /** `FILE:line:col` of a rule (its key path), when the policy came from a file. */
  locate?: (rule: string) => string;
  /** Directory relative roots resolve against. */
  dir: string;
}
