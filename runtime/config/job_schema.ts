/** The job-file schema (docs/job-file.md): one zod schema gives types, validation and `hermes schema`. */
import { z } from "zod";
import { PolicyConfig } from "./policy_schema.ts";
import { HOST_PATTERN, HOST_PATTERN_EXPECTED } from "./policy_match.ts";
import { DURATION_EXPECTED, DURATION_PATTERN } from "../core/duration.ts";
import { LABEL_KEY } from "../core/labels.ts";
import { HOST_RULE_EXPECTED, HOST_RULE_PATTERN } from "../sandbox/net_hosts.ts";
import { defaultsOf, type ProviderRegistry, PROVIDERS, settingsShape } from "../providers/registry.ts";
import type { Policy } from "./policy_schema.ts";

export const Duration = z.string().regex(DURATION_PATTERN, DURATION_EXPECTED);
const Size = z.union([
  z.number().int().positive(),
  z.string().regex(/^\s*\d+(\.\d+)?\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$/i, "expected a size like 64KiB or 256MB"),
]);
const Name = z.string().regex(/^[a-z0-9._-]+$/, "expected lower-case letters, digits, '.', '_' or '-'");

const PerMillion = z.number().min(0);
const ModelPricing = z.strictObject({
  input: PerMillion.describe("USD per million uncached prompt tokens"),
  output: PerMillion.describe("USD per million completion tokens (reasoning tokens included)"),
  cached_input: PerMillion.describe("USD per million prompt tokens read from the cache (default: input)")
    .optional(),
  cache_write: PerMillion.describe("USD per million prompt tokens written to the cache (default: input)")
    .optional(),
});

/**
 * The `model:` section under a provider registry: the keys every provider shares, then each provider's own
 * (its registry entry's settings), so a provider's key is validated, and located, like any other. The type
 * names the shared keys only: a provider's own are its registry entry's to read.
 */
export function modelConfigFor(registry: ProviderRegistry) {
  const names = Object.keys(registry) as [string, ...string[]];
  return z.strictObject({
    provider: z.enum(names).describe(
      Object.entries(registry).map(([name, entry]) => `${name}: ${entry.about}`).join("; "),
    ).optional(),
    name: z.string().min(1).describe(
      `Model name sent to the provider (required except for ${
        Object.entries(registry).filter(([, entry]) => entry.defaultModel !== undefined)
          .map(([name]) => name).join(", ")
      }; --model overrides it)`,
    ).optional(),
    base_url: z.url().describe(
      `Endpoint base URL, e.g. https://openrouter.ai/api/v1 (default: ${
        defaultsOf("baseUrlEnv", { prefix: "$", registry })
      }, ` +
        "else the provider's own endpoint)",
    ).optional(),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).describe(
      `Name of the environment variable holding the API key (default: ${
        defaultsOf("apiKeyEnv", { registry })
      }); unset ` +
        "is exit 2 before any model call. `none`: the server takes no key (a local llama.cpp, vLLM or Ollama)",
    ).optional(),
    context_window: z.number().int().positive().describe(
      "The model's context window in tokens; compaction keeps requests under it",
    ).optional(),
    max_output_tokens: z.number().int().positive().describe(
      "Most tokens one model reply may have (sent as max_tokens)",
    ).optional(),
    temperature: z.number().min(0).max(2).describe(
      "Sampling temperature, 0 to 2 (not sent by provider anthropic: its API version 2026-10-21 has none)",
    ).optional(),
    stream: z.boolean().describe(
      "Stream replies (default false); the idle timeout then measures inactivity, not the whole reply",
    )
      .optional(),
    idle_timeout: Duration.describe(
      "Longest the model may send nothing: after the request, then between bytes of the reply, streaming or " +
        "not (default 120s); a stall is not retried: the run ends failed, terminal_reason stalled (exit 1)",
    ).optional(),
    request_timeout: Duration.describe(
      "Ceiling on one model call, its retries and their waits included, however steadily bytes arrive " +
        "(default 10m); separate from limits.timeout: the run ends failed, terminal_reason stalled (exit 1)",
    ).optional(),
    max_retries: z.number().int().min(0).max(10).describe(
      "Retries on 408, 409, 429, 5xx, 529 and connection errors, before any of the reply has streamed (default " +
        "3); the server's retry-after-ms / retry-after is waited for, up to 60s. A 429 saying the quota is " +
        "exhausted (insufficient_quota) is not retried. When the retries of a 429, 503 or 529 run out the run " +
        "ends failed, terminal_reason rate_limited (exit 1)",
    ).optional(),
    fallback: z.array(z.string().min(1)).min(1).describe(
      "Models to try in order, for the same request, when the model is overloaded (503, 529) or rate-limited " +
        "(429) after its retries: same provider, endpoint and key. Each switch is a provider.retry event " +
        "naming the model; every request starts with model.name again",
    ).optional(),
    reasoning: z.boolean().describe(
      "Treat the model as an OpenAI reasoning model (sent max_completion_tokens instead of max_tokens, " +
        "no temperature, reasoning_effort): default true for o1/o3/o4 and gpt-5 names, false otherwise",
    ).optional(),
    reasoning_effort: z.enum(["minimal", "low", "medium", "high"]).describe(
      "How much a reasoning model thinks before it answers (sent as reasoning_effort; default: the server's)",
    ).optional(),
    structured_output: z.enum(["auto", "native", "prompt"]).describe(
      "How output.schema is asked for: native asks the server itself (OpenAI-compatible: response_format " +
        "json_schema; anthropic: a forced answer tool), so it cannot answer off-schema; prompt only asks in the prompt and validates after the fact, auto (default) " +
        "tries native and falls back to prompt for the session when the server refuses it (HTTP 400)",
    ).optional(),
    pricing: ModelPricing.describe(
      "USD per million tokens, overriding the built-in price table (runtime/providers/pricing.ts) for this " +
        "model; cost_usd and the spend caps use it",
    ).optional(),
    text_tool_calls: z.boolean().describe(
      "Recognise tool calls the model writes into its answer's text (<tool_call> blocks, [TOOL_CALLS], " +
        "<|python_tag|>, or an answer that is only a JSON call naming a tool), as local models served without " +
        "a tool-call parser do; only calls that end the answer and appear in no tool result or prompt of the " +
        "request count (default false)",
    ).optional(),
    ...(settingsShape(z, registry) as Record<never, never>),
  });
}

export const ModelConfig = modelConfigFor(PROVIDERS);

const PathList = z.array(z.string().min(1));
const SandboxNet = z.union([
  z.boolean(),
  z.array(z.string().regex(HOST_RULE_PATTERN, HOST_RULE_EXPECTED)).min(1),
]).describe(
  "Network: false (default) = none, only a private loopback; true = the host's network; a list of " +
    "host[:port] (*.example.com for names below it) = only those hosts, through an HTTP(S) proxy the " +
    "sandbox's HTTPS_PROXY/HTTP_PROXY point at (programs that ignore them reach nothing)",
);
/** Resource limits inside the OS sandbox (defaults in runtime/sandbox/policy.ts). */
const SandboxLimits = z.strictObject({
  processes: z.number().int().min(8).describe(
    "Processes and threads at once (a pids cgroup where the host delegates one, else RLIMIT_NPROC; default 512)",
  ).optional(),
  memory: Size.describe(
    "Memory of the whole tree (swap too, where the kernel accounts it) in a memory cgroup where the host delegates one; and of " +
      "each process's writable data (RLIMIT_DATA), the only cap where no cgroup is (default 4GiB)",
  ).optional(),
  file_size: Size.describe("Largest file a process may write, in /tmp and write roots (default 1GiB)")
    .optional(),
  tmp: Size.describe(
    "Size of the private /tmp and of /var/tmp (default 512MiB; /run and /dev/shm: at most 64MiB)",
  )
    .optional(),
}).describe("Resource limits of each sandboxed process tree");
/** `tools.shell.sandbox` (docs/sandbox.md; defaults in runtime/tools/shell/sandbox.ts). */
const ShellSandboxConfig = z.union([
  z.literal("off").describe(
    "Explicit opt-out: commands run on the host unsandboxed; a warning is printed and the result says sandbox: off",
  ),
  z.strictObject({
    write: PathList.describe(
      "Host paths commands may write, relative to the job file; created when missing (default: the listed " +
        "tools.write_file.paths, else none — a private /tmp is always writable)",
    ).optional(),
    read: PathList.describe(
      "When given, the only host paths visible, relative to the job file, plus the system directories " +
        "programs need (default: the whole host, read-only, with secrets such as ~/.ssh and the store hidden)",
    ).optional(),
    hide: PathList.describe(
      "More host paths shown empty inside, relative to the job file (added to the secrets hidden by default)",
    ).optional(),
    net: SandboxNet.optional(),
    limits: SandboxLimits.optional(),
  }).describe("The OS sandbox settings"),
], { error: 'expected "off" or a mapping {write, read, hide, net, limits}' })
  .describe("The OS sandbox (bubblewrap) around every command; off = explicit opt-out");
export const ToolsConfig = z.strictObject({
  shell: z.strictObject({
    allow: z.array(z.string().min(1)).describe(
      'Command patterns the model may run, e.g. "git *"; every simple command of a line must match',
    ).optional(),
    deny: z.array(z.string().min(1)).describe('Command patterns refused even when allowed, e.g. "git push *"')
      .optional(),
    cwd: z.string().describe(
      "Working directory of commands, relative to the job file (default its directory)",
    ).optional(),
    timeout: Duration.describe(
      "Per command; the command and everything it started are killed then (default 60s)",
    ).optional(),
    max_output: Size.describe("Output kept per command, head and tail (default 64KiB)").optional(),
    sandbox: ShellSandboxConfig.optional(),
  }).describe("Run shell commands matching allow and not deny").optional(),
  read_file: z.strictObject({
    paths: PathList.describe("Roots that may be read, relative to the job file (default: the job directory)")
      .optional(),
    max_bytes: Size.describe("Largest file returned (default 256KiB)").optional(),
    dedup: z.boolean().describe(
      "Answer a repeated read of an unchanged file (same path, same content) whose latest result is still " +
        'verbatim in the transcript with a short "unchanged since message #N" note instead of a second copy; ' +
        "after compaction pruned or summarised that result, the file is read in full again (default true)",
    ).optional(),
  }).describe("Read a text file inside the allowed roots").optional(),
  write_file: z.strictObject({
    paths: PathList.describe("Roots that may be written, relative to the job file").optional(),
    max_bytes: Size.describe("Largest content written (default 1MiB)").optional(),
  }).describe("Write a text file inside the allowed roots").optional(),
  list_dir: z.strictObject({
    paths: PathList.describe(
      "Roots that may be listed, relative to the job file (default: the job directory)",
    ).optional(),
    max_entries: z.number().int().positive().describe("Most entries returned per call (default 1000)")
      .optional(),
  }).describe("List a directory inside the allowed roots").optional(),
  http_fetch: z.strictObject({
    hosts: z.array(z.string().regex(HOST_PATTERN, HOST_PATTERN_EXPECTED)).describe(
      "Hosts that may be fetched, as in sandbox host lists: host, host:port, *.example.com (names below it), " +
        "[::1]:8080, or * (every name); internal addresses (loopback, private, link-local) only when an entry " +
        "names that address itself",
    ).optional(),
    timeout: Duration.describe("Per request (default 30s)").optional(),
    max_output: Size.describe("Body kept per response (default 256KiB)").optional(),
  }).describe("HTTP GET of URLs on the allowed hosts").optional(),
});

const Grant = z.union([z.boolean(), z.array(z.string())]);
const grant = (what: string) => Grant.describe(`${what}: false (default), true (any) or a list`).optional();
export const PluginEntry = z.strictObject({
  path: z.string().min(1).describe("A plugin directory (plugin.json + module) or a single module file"),
  permissions: z.strictObject({
    read: grant("Paths the plugin may read beyond its own directory"),
    write: grant("Paths the plugin may write"),
    net: grant("Hosts (host[:port]) the plugin may reach"),
    env: grant("Environment variables the plugin may read"),
    run: grant("Programs the plugin may run"),
    ffi: grant("Libraries the plugin may load"),
    sys: grant("System information APIs the plugin may use"),
  }).describe("What the plugin is granted; it is not loaded if plugin.json asks for more").optional(),
  config: z.record(z.string(), z.unknown()).describe("Free-form settings the plugin reads as ctx.config")
    .optional(),
  hook_timeout: Duration.describe(
    "Bound on every hook call (default 30s); a plugin that times out is stopped",
  ).optional(),
  max_memory: Size.describe("Memory cap of the plugin process (default 256MB)").optional(),
  tools: z.strictObject({
    allow: z.array(z.string().min(1)).describe(
      'Tool-name patterns of this plugin the model may call, e.g. "lookup*" (default: all)',
    ).optional(),
    deny: z.array(z.string().min(1)).describe(
      "Tool-name patterns of this plugin never called, even when allowed",
    )
      .optional(),
  }).describe("Which of the plugin's tools the model is offered and may call").optional(),
  isolation: z.enum(["subprocess", "worker"]).describe(
    "subprocess (default, a sandbox) or worker (trusted plugins only: a soft boundary)",
  ).optional(),
  sandbox: z.literal("off").describe(
    "Explicit opt-out: the plugin process runs on the host without the OS sandbox (only Deno's " +
      "permissions hold); a warning is printed and the result says sandbox: off",
  ).optional(),
});

export const InputSpec = z.strictObject({
  type: z.enum(["string", "number", "boolean"]).describe(
    "Type of the value given with --input (default string)",
  ).optional(),
  required: z.boolean().describe("The run is refused (exit 2) without this input").optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).describe("Value when --input does not give one")
    .optional(),
  description: z.string().describe("What the input is for").optional(),
});

export const LimitsConfig = z.strictObject({
  max_turns: z.number().int().positive().describe("Most steps (model calls) per turn (exit 3 when reached)")
    .optional(),
  timeout: Duration.describe("Wall time per prompt (exit 3 when reached)").optional(),
  max_tokens: z.number().int().positive().describe(
    "Most prompt + completion tokens per prompt (exit 3 when reached)",
  ).optional(),
  max_cost_usd: z.number().positive().describe(
    "Most USD per prompt (--max-budget-usd): a model call whose estimated input would pass it is not " +
      "sent, and a streamed reply that passes it is stopped (exit 3, terminal_reason max_cost); a model " +
      "without a known price is exit 2 before any call",
  ).optional(),
  max_concurrent_agents: z.number().int().positive().describe(
    "Most subagents (agents:) of one run working at once; further delegate calls wait (default 4)",
  ).optional(),
  max_agent_depth: z.number().int().positive().describe(
    "How deep subagents may delegate in turn: 1 lets the job's own model delegate only (default 2)",
  ).optional(),
});

/** One subagent the model may hand a task to with the delegate tool (docs/agents.md). */
export const WorkspaceConfig = z.strictObject({
  isolation: z.enum(["none", "worktree"]).describe(
    "worktree: the run works in a new git worktree on its own branch, and only it is writable; none " +
      "(default): in the job's own checkout",
  ).optional(),
  base: z.string().min(1).describe("The commit, branch or tag the worktree starts from (default HEAD)")
    .optional(),
  branch: z.string().min(1).describe(
    "The new branch's name; {{ session_id }} is replaced by the session's id (default hermes/{{ session_id }})",
  ).optional(),
  keep: z.enum(["always", "on_change", "never"]).describe(
    "When the run ends: keep the worktree always, only when it has commits or changed files (on_change, " +
      "default), or never (the branch stays when it has commits)",
  ).optional(),
  shared: z.boolean().describe(
    "Without isolation: let this run write the checkout while another session writes it too (default false: " +
      "the second run exits 2, workspace_busy)",
  ).optional(),
});

export const AgentEntry = z.strictObject({
  description: z.string().min(1).describe("What the agent is for: shown to the model in the delegate tool"),
  system: z.string().describe("The agent's system prompt").optional(),
  model: z.string().min(1).describe("The agent's model name (default: the job's model)").optional(),
  tools: z.array(z.enum(["shell", "read_file", "write_file", "list_dir", "http_fetch"])).describe(
    "Built-in tools of the job the agent gets, with the job's rules for them (default: all the job's); " +
      "a tool the job does not have is refused (exit 2)",
  ).optional(),
  limits: z.strictObject({
    max_turns: z.number().int().positive().describe("Most model calls per delegated task").optional(),
    timeout: Duration.describe("Wall time per delegated task").optional(),
    max_tokens: z.number().int().positive().describe("Most tokens per delegated task").optional(),
  }).describe("Limits of each delegated task (the parent's timeout and cancel bound it too)").optional(),
  workspace: WorkspaceConfig.pick({ isolation: true, base: true, branch: true, keep: true }).describe(
    "isolation: worktree gives each task a git worktree of its own on its own branch, made from the job's " +
      "checkout (or the run's worktree), so tasks editing at once do not collide; default: the job's directory",
  ).optional(),
});

export const MicroCompactionConfig = z.strictObject({
  enabled: z.boolean().describe(
    "Between turns, fold the oldest assistant exchange into one rolling summary (default false)",
  ).optional(),
  threshold: z.number().gt(0).max(1).describe(
    "Fold while the estimated prompt exceeds this share of context_window (default 0.5)",
  ).optional(),
  payback: z.number().int().positive().describe(
    "A fold runs only when the tokens it removes from this many following requests pay for its summary " +
      "call and the prompt cache it breaks (default 8; raise it for a provider without a prompt cache)",
  ).optional(),
});

export const CompactionConfig = z.strictObject({
  enabled: z.boolean().describe("Compact long sessions automatically (default true)").optional(),
  threshold: z.number().gt(0).max(1).describe(
    "Compact when the estimated prompt exceeds this share of context_window (default: what the window " +
      "holds once model.max_output_tokens, else 8192, is kept free for the reply, between 0.75 and 0.9)",
  ).optional(),
  low_water: z.number().gt(0).max(1).describe(
    "An automatic compaction brings the prompt down to this share of context_window when it can, so the " +
      "next one is far away and the prompt cache stays warm (default 0.5, at most threshold)",
  ).optional(),
  protect_first: z.number().int().min(0).describe("Leading messages always kept verbatim (default 3)")
    .optional(),
  protect_last: z.number().int().min(1).describe(
    "Trailing messages kept verbatim when they fit tail_budget (default 20): a preference that gives way",
  ).optional(),
  tail_budget: z.number().gt(0).max(1).describe(
    "The protected tail takes up to protect_last trailing messages within this share of context_window, " +
      "walked backwards by tokens (default 0.12); when the context is still too big the tail yields down to " +
      "the latest user message and the current tool round, its tool results cut to fit",
  ).optional(),
  max_tool_result: z.number().gt(0).max(1).describe(
    "A tool result larger than this share of context_window is cut to its head and tail when it is " +
      "stored; the full text stays archived (default 0.15)",
  ).optional(),
  prune_min: z.number().int().min(1).describe(
    "Between turns, below the threshold, prune old tool results when that frees at least this many " +
      "tokens (default: no proactive pruning)",
  ).optional(),
  micro: MicroCompactionConfig.describe("Micro-compaction: a rolling summary kept up to date between turns")
    .optional(),
  summary_model: z.string().min(1).describe("Model that writes summaries (default: the session's model)")
    .optional(),
  summary_context_window: z.number().int().positive().describe(
    "Context window of summary_model in tokens (default: context_window); larger middles are summarised " +
      "in chunks that fit",
  ).optional(),
  prune_tool_results: z.boolean().describe(
    "Replace old tool results by placeholders before summarising (default true)",
  ).optional(),
  summary_timeout: Duration.describe("Bound on one summary call").optional(),
});

export const LoopsConfig = z.strictObject({
  min_interval: Duration.describe("Shortest /loop interval; shorter ones are raised to it (default 30s)")
    .optional(),
  max_ticks: z.number().int().positive().describe("A loop pauses after this many ticks (default 100)")
    .optional(),
  self_paced_floor: Duration.describe("First delay of a loop without an interval (default 60s)").optional(),
  self_paced_ceiling: Duration.describe("Longest delay of a self-paced loop (default 15m)").optional(),
});

export const HeartbeatConfig = z.strictObject({
  min_interval: Duration.describe("Shortest /heartbeat interval; shorter ones are refused (default 60s)")
    .optional(),
});

export const ScheduleConfig = z.strictObject({
  cron: z.string().min(1).describe('5-field cron expression (6 fields: with seconds), e.g. "0 9 * * 1-5"'),
  timezone: z.string().min(1).describe(
    "IANA time zone of the cron expression, e.g. Europe/Paris (default: the machine's local time)",
  ).optional(),
  catch_up: z.enum(["one", "none"]).describe("After downtime: run one missed slot (one, default) or none")
    .optional(),
  on_crash: z.enum(["skip", "rerun"]).describe(
    "A slot whose daemon died mid-run: skip (default) records it crashed and never starts it twice; " +
      "rerun takes it over once (its side effects may repeat)",
  ).optional(),
  overlap: z.enum(["skip", "queue", "cancel_previous"]).describe(
    "A slot due while the job's previous run still goes: skip (default) records it skipped; queue runs it " +
      "once that run ends (at most one waits: another due meanwhile is skipped); cancel_previous interrupts " +
      "the running one (recorded cancelled) and starts the new slot. Every decision is in the run history",
  ).optional(),
  max_cost_usd_per_day: z.number().positive().describe(
    "Most USD the job's runs may spend per day (the schedule's time zone), summed from the store across " +
      "daemons: a slot once it is spent is skipped, and a run gets what is left as its cost limit",
  ).optional(),
});

export const ConcurrencyConfig = z.strictObject({
  group: z.string().min(1).describe(
    "The group this job's queued runs belong to, across every worker and host; templates may use the inputs " +
      'and the model name, e.g. "repo-{{ inputs.repo }}" or "{{ model.name }}"',
  ),
  limit: z.number().int().positive().describe("Most runs of the group running at once (default 1)")
    .optional(),
  cancel_in_progress: z.boolean().describe(
    "A newly submitted run cancels the group's queued runs and stops its running ones (default false)",
  ).optional(),
});

const RunEndings = z.array(z.enum(["success", "failed", "limit", "interrupted", "cancelled", "crashed"]));

export const NotifyEntry = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).describe(
    "Endpoint POSTed the run record with its result when a queued run ends (X-Hermes-Event, " +
      "X-Hermes-Delivery, X-Hermes-Timestamp, X-Hermes-Signature-256 headers); retried with back-off for up " +
      "to 10 minutes until it answers 2xx",
  ).optional(),
  secret_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected a variable name").describe(
    "Variable of the worker's environment holding the HMAC-SHA256 secret the signature is made with",
  ).optional(),
  command: z.array(z.string().min(1)).min(1).describe(
    "Program and arguments run on the worker's host with the same JSON on stdin, in Hermes's own " +
      "environment (never the job's env:)",
  ).optional(),
  on: RunEndings.describe(
    "The endings notified: success, failed, limit, interrupted, cancelled, crashed (default: all)",
  ).optional(),
}).refine((entry) => (entry.command === undefined) !== (entry.url === undefined), {
  message: "expected exactly one of url or command",
});

export const WebhookTrigger = z.strictObject({
  secret_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected a variable name").describe(
    "Variable of the server's environment (never the job's env:) holding the secret deliveries are signed with",
  ),
  signature: z.enum(["github", "hmac-sha256"]).describe(
    "github (default): X-Hub-Signature-256, HMAC-SHA256 of the body; hmac-sha256: X-Hermes-Signature-256, " +
      'HMAC-SHA256 of X-Hermes-Timestamp + "." + the body, the timestamp within 5 minutes',
  ).optional(),
  events: z.array(z.string().min(1)).min(1).describe(
    "The events that start a run (X-GitHub-Event or X-Hermes-Event, e.g. issues, pull_request); others are " +
      "acknowledged and start nothing (default: every event)",
  ).optional(),
  inputs: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/), z.string()).describe(
    "The run's inputs from the delivery: templates over {{ trigger.body.PATH }} (the JSON body, e.g. " +
      '"{{ trigger.body.issue.number }}") and {{ trigger.event }}; checked like --input',
  ).optional(),
});

export const QueueConfig = z.strictObject({
  max_running: z.number().int().positive().describe(
    "Most queued runs running at once in the whole store, across every worker and host (default: no cap)",
  ).optional(),
});

export const OutputConfig = z.strictObject({
  format: z.enum(["text", "json", "stream-json"]).describe(
    "stdout: the final text, one JSON result, or NDJSON events (--output wins)",
  ).optional(),
  file: z.string().min(1).describe(
    "Also write the final answer to this file, relative to the job file (never inside a .git directory)",
  )
    .optional(),
  schema: z.record(z.string(), z.unknown()).describe(
    "JSON Schema the final answer must meet (one repair turn, else exit 1)",
  ).optional(),
});

/** One `mcp_servers` entry (docs/mcp.md): a stdio command or a Streamable HTTP url. */
export const McpServerEntry = z.strictObject({
  command: z.string().min(1).describe("Program that starts a stdio MCP server, e.g. npx").optional(),
  args: z.array(z.string()).describe("Arguments of command").optional(),
  env: z.union([
    z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).describe(
      "Names passed through from Hermes's environment",
    ),
    z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).describe(
      "Names and values; {{ env.NAME }} is substituted",
    ),
  ]).describe(
    "The server's environment variables: names passed through, or name: value (nothing else of the host's " +
      "environment but PATH, HOME, USER, LOGNAME, SHELL and TERM)",
  ).optional(),
  cwd: z.string().min(1).describe(
    "Working directory of command, relative to the job file (default: its directory)",
  )
    .optional(),
  url: z.url().describe("Endpoint of a Streamable HTTP MCP server (instead of command)").optional(),
  headers: z.record(z.string(), z.string()).describe(
    "HTTP headers sent to url; {{ env.NAME }} is substituted, e.g. Authorization: Bearer {{ env.TOKEN }}",
  ).optional(),
  tools: z.strictObject({
    allow: z.array(z.string().min(1)).describe(
      'Tool-name patterns offered to the model, e.g. "read_*" (default: all)',
    )
      .optional(),
    deny: z.array(z.string().min(1)).describe("Tool-name patterns never offered, even when allowed")
      .optional(),
  }).describe("Which of the server's tools the model sees, as mcp__SERVER__TOOL").optional(),
  timeout: Duration.describe("Per tool call; the request is cancelled when it passes (default 60s)")
    .optional(),
  startup_timeout: Duration.describe("Bound on starting the server and its initialize answer (default 30s)")
    .optional(),
  required: z.boolean().describe(
    "A server that fails to start stops the run with exit 2 before any model call (default false: a warning event)",
  ).optional(),
  sandbox: z.union([
    z.literal("off").describe("Explicit opt-out: the stdio server runs on the host unsandboxed"),
    z.strictObject({
      read: PathList.describe(
        "More host paths visible read-only, relative to the job file (always: the command's install directory, " +
          "cwd and the paths named in args)",
      ).optional(),
      write: PathList.describe("Host paths the server may write, relative to the job file (default none)")
        .optional(),
      net: SandboxNet.optional(),
      limits: SandboxLimits.optional(),
    }).describe("The OS sandbox settings of a stdio server"),
  ], { error: 'expected "off" or a mapping {read, write, net, limits}' })
    .describe("The OS sandbox (bubblewrap) around a stdio server; off = explicit opt-out").optional(),
}).refine((entry) => (entry.command === undefined) !== (entry.url === undefined), {
  message: "expected exactly one of command (stdio) or url (Streamable HTTP)",
});
const McpServers = z.record(
  z.string().regex(/^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$/, "expected letters, digits, '-' or single '_'"),
  McpServerEntry,
).describe("MCP servers whose tools are offered to the model as mcp__NAME__TOOL");

export const ApprovalConfig = z.strictObject({
  command: z.array(z.string().min(1)).min(1).describe(
    "Program and arguments asked about each tool call outside the job's rules: it gets the call as JSON on " +
      "stdin ({session_id, job, tool, tool_call_id, server?, args, reason, rule, subject?, title}: subject is " +
      "where the call leads, e.g. a file's real path, and the approval covers it alone) and answers " +
      '"allow" or "deny" on stdout (or {"decision": "allow"}); anything else, a failure or the timeout is ' +
      "deny, and its whole process group is killed when the answer is in or the time is up. A relative " +
      "program path resolves against the job file's directory, which is also its working directory; it " +
      "runs on the host with Hermes's own PATH, HOME, USER, locale and TMPDIR, never the job's env:",
  ).optional(),
  url: z.url().describe(
    'Endpoint POSTed the same JSON; a 2xx answer "allow" or {"decision": "allow"} allows the call, anything ' +
      "else denies it",
  ).optional(),
  api: z.literal(true).describe(
    "Park the call as a pending approval in the store, decided over hermes serve's API (GET /v1/approvals, " +
      "POST /v1/approvals/ID, a token with the approvals scope) on any server sharing the store; the run " +
      "shows waiting_approval meanwhile, and the timeout denies it",
  ).optional(),
  timeout: Duration.describe(
    "How long one answer may take before the call is denied (default 30s; with api: 1h)",
  ).optional(),
}).refine(
  (entry) => [entry.command, entry.url, entry.api].filter((way) => way !== undefined).length === 1,
  { message: "expected exactly one of command, url or api: true" },
);

const SecretNames = z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected a variable name"));

const StoreRetry = Duration.describe(
  "How long transient store faults (database restarting, connection lost, busy) are waited out before " +
    "the run fails with terminal_reason store_unavailable (default 60s; 0s: not at all)",
).optional();

/** `instructions:` what of the repository's own conventions reaches the system prompt (docs/workspaces.md). */
export const InstructionsConfig = z.strictObject({
  agents_md: z.boolean().describe(
    "Add the AGENTS.md files from the repository root down to the job's directory to the system prompt, in " +
      "that order (default true)",
  ).optional(),
  max_bytes: Size.describe(
    "Most bytes of AGENTS.md text added, all files together; a file past it is cut and says so (default 32KiB)",
  ).optional(),
  skills: z.boolean().describe(
    "Load Agent Skills from .agents/skills at the repository root and ~/.config/hermes/skills (default true; " +
      "the job's skills: are loaded either way)",
  ).optional(),
});

/** `workspace:` where the run works on its repository (docs/workspaces.md). */

const JOB_MODEL = "The model and its provider";
const USER_MODEL = "Default model";

export const JobFile = z.strictObject({
  $schema: z.string().describe("JSON Schema of this file, for editors").optional(),
  name: Name.describe("Job name: lower-case letters, digits, '.', '_' or '-'"),
  description: z.string().describe("What the job does").optional(),
  model: ModelConfig.describe(JOB_MODEL).optional(),
  system: z.string().describe("System prompt").optional(),
  inputs: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/), InputSpec).describe(
    "Named inputs, set with --input name=value and used as {{ inputs.name }}",
  ).optional(),
  env: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe(
    "Extra environment for tools",
  ).optional(),
  labels: z.record(
    z.string().regex(LABEL_KEY, "expected a label key: letters, digits, '_', '.' and '-'"),
    z.union([z.string(), z.number(), z.boolean()]),
  ).describe(
    "Labels stored with each session and model call, for hermes cost --by label:KEY, OpenTelemetry and the " +
      "result; {{ inputs.x }} and {{ env.X }} are substituted; --label K=V and the CI's own (ci.repository, " +
      "ci.run_id, ci.sha, …) are added",
  ).optional(),
  redact: SecretNames.describe(
    "More variables whose values are secret: replaced before anything is stored or printed (always: *_KEY, " +
      "*_TOKEN, *_SECRET, *PASSWORD* and model.api_key_env)",
  ).optional(),
  prompt: z.string().describe("The first user turn; {{ inputs.x }} and {{ env.X }} are substituted")
    .optional(),
  steps: z.array(z.string().min(1)).describe("Further turns in the same session: prompts or slash commands")
    .optional(),
  tools: ToolsConfig.describe("Built-in tools offered to the model; a tool not listed is not offered")
    .optional(),
  plugins: z.array(PluginEntry).describe("Plugins loaded for this job, each in its own sandboxed process")
    .optional(),
  mcp_servers: McpServers.optional(),
  approval: ApprovalConfig.describe(
    "Who decides about tool calls outside the job's allow-lists (shell allow, paths, hosts, tools.allow of " +
      "MCP servers and plugins); deny rules are never asked about. Without it such calls go to the " +
      "front-end (the ACP editor, an RPC client that supports tool.approve) or are denied",
  ).optional(),
  limits: LimitsConfig.describe("Limits per prompt").optional(),
  agents: z.record(
    z.string().regex(/^[a-z0-9_-]+$/, "expected an agent name: lower-case letters, digits, '_' or '-'"),
    AgentEntry,
  )
    .describe(
      "Subagents the model may hand tasks to with the delegate tool, each as its own session (docs/agents.md)",
    )
    .optional(),
  compaction: CompactionConfig.describe("Keeping long sessions under the context window").optional(),
  loops: LoopsConfig.describe("/loop settings").optional(),
  heartbeat: HeartbeatConfig.describe("/heartbeat settings").optional(),
  schedule: ScheduleConfig.describe("Cron schedule served by hermes daemon").optional(),
  notify: z.array(NotifyEntry).describe(
    "Completion notifications of the job's queued runs (hermes submit, scheduled slots): signed HTTP " +
      "deliveries or host commands",
  ).optional(),
  triggers: z.strictObject({
    webhook: WebhookTrigger.describe(
      "POST /v1/hooks/NAME on hermes serve --jobs DIR starts a run of this job, its signature the authentication",
    ).optional(),
  }).describe("What starts this job's runs besides hermes run, hermes submit and the schedule").optional(),
  on_crash: z.enum(["skip", "rerun"]).describe(
    "A queued run (hermes submit, a webhook, the API) whose worker died mid-run: skip (default) records it " +
      "crashed and never starts it twice; rerun lets one other worker take it over once (its side effects may " +
      "repeat). Default for scheduled slots too, unless schedule.on_crash says otherwise",
  ).optional(),
  concurrency: ConcurrencyConfig.describe(
    "Caps the runs of a group submitted to the queue (hermes submit, scheduled slots) running at once",
  ).optional(),
  output: OutputConfig.describe("Where and how the result is written").optional(),
  store: z.strictObject({ retry: StoreRetry }).describe("How this job's runs treat store faults").optional(),
  instructions: InstructionsConfig.describe(
    "The repository's AGENTS.md files and Agent Skills conventions (docs/workspaces.md)",
  ).optional(),
  skills: PathList.describe(
    "Directories of Agent Skills (folders holding a SKILL.md), relative to the job file: each skill's name and " +
      "description are listed in the system prompt, and the skill tool gives its body when the model asks",
  ).optional(),
  workspace: WorkspaceConfig.describe("Where the run works: its own git worktree, or the checkout itself")
    .optional(),
  record: z.string().min(1).describe(
    "Record every run of this job into this cassette file (inside the job directory; replaced at each run's " +
      "end), for hermes replay and hermes test: also for RPC and queued runs (hermes run --record wins)",
  ).optional(),
});

/** `HERMES_HOME/config.yaml`: user-wide defaults. */
export const UserConfig = z.strictObject({
  model: ModelConfig.describe(USER_MODEL).optional(),
  tools: ToolsConfig.describe("Default tools").optional(),
  plugins: z.array(PluginEntry).describe("Global plugins, loaded for every session").optional(),
  mcp_servers: McpServers.optional(),
  redact: SecretNames.describe("Variables whose values are secret in every job (added to a job's redact:)")
    .optional(),
  limits: LimitsConfig.describe("Default limits per prompt").optional(),
  compaction: CompactionConfig.describe("Default compaction settings").optional(),
  loops: LoopsConfig.describe("Default /loop settings").optional(),
  heartbeat: HeartbeatConfig.describe("Default /heartbeat settings").optional(),
  store: z.strictObject({
    url: z.string().regex(/^postgres(ql)?:\/\//).describe(
      "The PostgreSQL store shared by every host (postgres://user@host/db); --db and HERMES_DATABASE_URL override it",
    ).optional(),
    retry: StoreRetry,
  }).describe("Where sessions are stored (default: HERMES_HOME/state.db, SQLite)").optional(),
  notify: z.array(NotifyEntry).describe(
    "Completion notifications of every queued run, added to a job's own",
  ).optional(),
  queue: QueueConfig.describe("The run queue every worker on this store works (hermes daemon)").optional(),
  serve: z.strictObject({
    listen: z.string().min(1).describe("The address hermes serve listens on, HOST:PORT (--listen wins)")
      .optional(),
    jobs: z.string().min(1).describe(
      "The folder of job files requests name, relative to HERMES_HOME (--jobs wins)",
    ).optional(),
  }).describe("hermes serve's defaults").optional(),
  policy: PolicyConfig.describe(
    "Trust policy: what job files may ask for (--policy FILE and HERMES_POLICY replace it)",
  ).optional(),
  telemetry: z.strictObject({
    endpoint: z.string().regex(/^https?:\/\//).describe(
      "The collector's OTLP/HTTP base URL (http://localhost:4318); /v1/traces and /v1/metrics are appended. " +
        "OTEL_EXPORTER_OTLP_ENDPOINT overrides it",
    ).optional(),
    headers: z.record(z.string(), z.string()).describe(
      "Headers sent with every export (an API key of a hosted collector); OTEL_EXPORTER_OTLP_HEADERS adds to them",
    ).optional(),
    service_name: z.string().min(1).describe(
      "service.name of the spans and metrics (default hermes; OTEL_SERVICE_NAME)",
    )
      .optional(),
    capture_content: z.boolean().describe(
      "Put prompts, answers, tool arguments and results (redacted) on spans; off by default: only names, " +
        "counts and durations (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)",
    ).optional(),
  }).describe("OpenTelemetry export of spans and metrics (off unless an endpoint is set here or in OTEL_*)")
    .optional(),
});

/**
 * The job file and config.yaml schemas under another provider registry (one with a provider of a test's own):
 * the same but for the `model:` section, whose provider choices and own keys are that registry's.
 */
export function schemasFor(
  registry: ProviderRegistry,
): { jobFile: typeof JobFile; userConfig: typeof UserConfig } {
  if (registry === PROVIDERS) return { jobFile: JobFile, userConfig: UserConfig };
  const model = modelConfigFor(registry);
  return {
    jobFile: JobFile.extend({ model: model.describe(JOB_MODEL).optional() }) as unknown as typeof JobFile,
    userConfig: UserConfig.extend({
      model: model.describe(USER_MODEL).optional(),
    }) as unknown as typeof UserConfig,
  };
}

export type JobFile = z.infer<typeof JobFile>;
/** config.yaml as loaded: the trust policies in force are attached (policy.ts, job_file.ts). */
export type UserConfig = z.infer<typeof UserConfig> & { policies?: readonly Policy[] };
export type ModelConfig = z.infer<typeof ModelConfig>;
export type ToolsConfig = z.infer<typeof ToolsConfig>;
export type PluginEntry = z.infer<typeof PluginEntry>;
export type McpServerEntry = z.infer<typeof McpServerEntry>;
export type ApprovalConfig = z.infer<typeof ApprovalConfig>;
export type LimitsConfig = z.infer<typeof LimitsConfig>;
export type AgentEntry = z.infer<typeof AgentEntry>;
export type CompactionConfig = z.infer<typeof CompactionConfig>;
export type LoopsConfig = z.infer<typeof LoopsConfig>;
export type HeartbeatConfig = z.infer<typeof HeartbeatConfig>;
export type ScheduleConfig = z.infer<typeof ScheduleConfig>;
export type ConcurrencyConfig = z.infer<typeof ConcurrencyConfig>;
export type NotifyEntry = z.infer<typeof NotifyEntry>;
export type WebhookTrigger = z.infer<typeof WebhookTrigger>;
export type OutputConfig = z.infer<typeof OutputConfig>;
export type InputSpec = z.infer<typeof InputSpec>;
export type InstructionsConfig = z.infer<typeof InstructionsConfig>;
export type WorkspaceConfig = z.infer<typeof WorkspaceConfig>;

/** JSON Schema for editors (`# yaml-language-server: $schema=…`). */
export function jobJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(JobFile, { target: "draft-2020-12", io: "input" }),
    $id: "https://hermes.dev/schema/job.json",
    title: "Hermes job file",
  };
}
