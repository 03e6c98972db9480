/**
 * The machine-readable output as zod schemas: the fields of every event and of the result object. They are
 * the one definition: events.ts takes its TypeScript types from them (type-only, so emitting an event never
 * loads zod), and `hermes schema events|result` and `schemas/*.schema.json` are the JSON Schemas made from
 * them. A consumer can rely on a field for as long as `schema_version` stays the same.
 */
import { z } from "zod";
import { SCHEMA_VERSION } from "./events.ts";
import { INPUT_SOURCES, type SessionStatus, type ToolCall, type Usage } from "./types.ts";

const count = z.number().int().nonnegative();
const nullableMs = count.nullable();

const toolCall = z.strictObject({
  id: z.string().describe("The provider's id of the call"),
  name: z.string(),
  arguments: z.string().describe("The raw JSON text the model produced"),
});

/** Token counts of a model call, or summed over a run. */
const worktreeReport = z.strictObject({
  path: z.string().describe("The worktree the run worked in (gone when it was removed at the end)"),
  branch: z.string().describe("Its branch"),
  base: z.string().describe("The commit it started from"),
  commits: z.array(z.string()).describe("The commits on the branch since base, oldest first"),
  changed_files: z.array(z.string()).describe(
    "Files that differ from base (committed or not, untracked included), relative to the worktree",
  ),
  kept: z.boolean().describe(
    "Whether the worktree is still there (keep: always, or on_change with changes)",
  ),
});

const usage = z.strictObject({
  prompt_tokens: count,
  completion_tokens: count,
  cached_tokens: count.describe(
    "Prompt tokens the provider served from its prompt cache (part of prompt_tokens; 0 when it reported none)",
  ),
  cache_write_tokens: count.describe(
    "Prompt tokens written to the provider's prompt cache (part of prompt_tokens; 0 when it reported none)",
  ),
  reasoning_tokens: count.describe(
    "Completion tokens the model spent reasoning before it answered (part of completion_tokens; 0 when it " +
      "reported none)",
  ),
});

const costUsd = z.number().nonnegative().nullable();

const sessionStatus = z.enum(["running", "success", "failed", "limit", "interrupted", "idle"]);

/** The result's fields besides `type`, `schema_version` and `session_id`. */
export const runResultFields = z.strictObject({
  status: z.enum(["success", "failed", "limit", "interrupted"]),
  exit_code: z.number().int().describe("The process's exit code for this outcome (0, 1, 2, 3, 130, 143)"),
  job: z.string().describe("The job's name (oneshot for -p without a job file)"),
  labels: z.record(z.string(), z.string()).describe(
    "The session's labels: the CI's (ci.repository, ci.run_id, ci.sha, …), the job's labels: and --label",
  ),
  final: z.string().describe("The final answer (a slash command's output when the prompt was one)"),
  output: z.unknown().describe("The parsed structured answer when output.schema is set and met, else null"),
  turns: count.describe("Model calls made by this run"),
  usage: usage.describe("Tokens used by this run, summed over its model calls"),
  cost_usd: costUsd.describe(
    "What this run's model calls cost (USD); null when any of them was of a model without a known price",
  ),
  duration_ms: count,
  compactions: count.describe("Compactions committed during this run"),
  terminal_reason: z.string().describe(
    "Why it ended: completed, loop_done, max_turns, timeout, max_tokens, max_cost, provider_error, rate_limited, " +
      "schema_mismatch, empty_response, output_truncated, content_filtered, interrupted, cancelled, invalid_input, " +
      "replay_diverged, …",
  ),
  error: z.string().nullable().describe("What went wrong, null on success"),
  sandbox: z.literal("off").describe(
    "Present only when the shell tool, a plugin or an MCP server ran without the OS sandbox (sandbox: off)",
  ).exactOptional(),
  instructions: z.array(z.string()).describe(
    "The AGENTS.md files in the session's system prompt, repository root first (present when there were any)",
  ).exactOptional(),
  workspace: worktreeReport.describe(
    "Present when the run worked in its own git worktree (workspace.isolation: worktree)",
  )
    .exactOptional(),
  agents: z.array(z.strictObject({
    name: z.string().describe("The agent's name (agents: in the job)"),
    session_id: z.string().describe("The child session that did the task"),
    status: z.enum(["success", "failed", "limit", "interrupted"]),
    usage: usage.describe("Tokens of the child and of its own children"),
    cost_usd: costUsd.describe(
      "What the child and its own children cost (USD); null when any price is unknown",
    ),
    workspace: worktreeReport.describe(
      "Present when the agent works in its own git worktree (agents.NAME.workspace.isolation: worktree)",
    ).exactOptional(),
  })).describe(
    "The tasks this run delegated (the delegate tool), in the order they started; present when any",
  )
    .exactOptional(),
  total: z.strictObject({
    usage: usage.describe("This run's tokens and its subagents' (usage is this run's own)"),
    cost_usd: costUsd.describe("This run's cost and its subagents'; null when any price is unknown"),
  }).describe("Present with agents: what the run and every task it delegated used together").exactOptional(),
});

/** The fields of each event, by type (without `type` and the envelope). */
export const eventFields = {
  "session.start": z.strictObject({
    job: z.string(),
    model: z.string(),
    provider: z.string().describe(
      "The model's provider (openai, scripted, …: model.provider or its default)",
    ),
    resumed: z.boolean().describe("The session existed already (--resume, RPC, the daemon)"),
  }),
  "turn.start": z.strictObject({
    turn: count.describe("The step's number in the session (the event keeps its published name)"),
    injected: z.array(z.string()).describe("Names of what was added to this step's prompt (plugins)")
      .exactOptional(),
  }).describe("A step of the model loop begins: one model call, then the tool calls it asks for"),
  message: z.union([
    z.strictObject({
      role: z.literal("user"),
      content: z.string(),
      source: z.enum(INPUT_SOURCES).describe("Which front-end the input came from"),
    }),
    z.strictObject({
      role: z.literal("assistant"),
      content: z.string(),
      tool_calls: z.array(toolCall).exactOptional(),
    }),
  ]),
  "tool.call": z.strictObject({
    tool: z.string(),
    tool_call_id: z.string(),
    args: z.record(z.string(), z.unknown()),
    server: z.string().describe("The MCP server of an mcp__SERVER__TOOL call").exactOptional(),
  }),
  "tool.result": z.strictObject({
    tool: z.string(),
    tool_call_id: z.string(),
    status: z.enum(["ok", "error", "denied"]),
    content: z.string(),
    duration_ms: count,
    server: z.string().exactOptional(),
  }),
  "tool.denied": z.strictObject({
    tool: z.string(),
    tool_call_id: z.string(),
    reason: z.string(),
    server: z.string().exactOptional(),
  }),
  "approval.requested": z.strictObject({
    approval_id: z.string().describe("Decide it with POST /v1/approvals/ID (hermes serve)"),
    run_id: z.string().nullable().describe("The queued run it holds (null for a run not from the queue)"),
    tool: z.string(),
    tool_call_id: z.string(),
    server: z.string().exactOptional(),
    args: z.record(z.string(), z.unknown()),
    reason: z.string().describe("Why the job's rules do not allow the call"),
    rule: z.string().describe("The rule the job could add to allow such calls without asking"),
    subject: z.string().exactOptional().describe("What the call acts on as it will run; approved alone"),
    expires_at: count.describe("When the timeout denies it (epoch ms)"),
  }).describe(
    "A tool call outside the job's rules parked for a decision over the API (approval: {api: true}); the run " +
      "waits (waiting_approval) until approval.resolved",
  ),
  "approval.resolved": z.strictObject({
    approval_id: z.string(),
    tool: z.string(),
    tool_call_id: z.string(),
    status: z.enum(["allowed", "denied", "expired", "cancelled"]).describe(
      "expired: the timeout denied it; cancelled: the run stopped first",
    ),
    reason: z.string().nullable().describe("The decider's reason, if given"),
    decided_by: z.string().nullable().describe("The id of the API token that decided it"),
  }).describe("How a parked tool call was decided; denied, expired and cancelled calls do not run"),
  "tool.progress": z.strictObject({
    tool: z.string(),
    tool_call_id: z.string(),
    server: z.string(),
    progress: z.number(),
    total: z.number().nullable(),
    message: z.string().nullable(),
  }).describe("A progress notification of a running MCP tool call"),
  "mcp.error": z.strictObject({ server: z.string(), error: z.string() }).describe(
    "An MCP server that failed to start (not required: the run goes on without its tools)",
  ),
  compaction: z.strictObject({
    kind: z.string().describe("summarize, micro_summarize, prune_tool_results, fallback, …"),
    reason: z.string().describe("manual, pre_api, post_tool, overflow, between_turns, proactive_prune, …"),
    before_tokens: count,
    after_tokens: count,
    messages_removed: z.number().int(),
    compaction_id: z.number().int(),
    occupancy: z.number().describe("after_tokens ÷ the compaction threshold: how much headroom is left"),
  }).describe("A committed compaction pass"),
  "compaction.start": z.strictObject({ reason: z.string(), kind: z.string(), before_tokens: count }).describe(
    "A compaction pass took the lease and starts working (a summary call may follow)",
  ),
  "compaction.blocked": z.strictObject({
    reason: z.enum(["breaker", "cooldown", "refused_growth", "summary_failed", "not_a_summary", "infeasible"])
      .describe(
        "summary_failed, not_a_summary and infeasible come with the fallback (a summary failed, was no " +
          "summary, or was not worth a call)",
      ),
    kind: z.string(),
    trigger: z.string().describe("The pass's reason"),
    before_tokens: count,
    until: z.string().nullable().describe("When automatic compaction may run again (breaker, cooldown)"),
    fallback: z.boolean().describe(
      "The deterministic fallback ran instead: the middle was dropped behind one marker (archived, still " +
        "searchable), so the request fits the window all the same",
    ).exactOptional(),
  }).describe(
    "Automatic compaction was wanted but did not happen: the breaker is open, summary calls are cooling " +
      "down, or the result would not have been smaller (refused_growth)",
  ),
  "compaction.failed": z.strictObject({ reason: z.string(), error: z.string() }).describe(
    "A compaction pass that failed (its summary call, typically); the transcript is unchanged",
  ),
  command: z.strictObject({ name: z.string(), output: z.string() }).describe(
    "A slash command's output (every command run: a job step, -p, RPC, ACP, a loop tick)",
  ),
  "interval.raised": z.strictObject({
    command: z.string(),
    setting: z.string(),
    requested_ms: count,
    interval_ms: count,
  }).describe("An interval below its floor was raised to it (/loop 5s … under loops.min_interval)"),
  sandbox: z.strictObject({
    mode: z.enum(["off", "on"]),
    memory: z.literal("per_process").optional().describe(
      "mode on: the memory cap is RLIMIT_DATA, per process, not for a command's whole tree",
    ),
    reason: z.string(),
  }).describe(
    "Something of the session runs without the OS sandbox (mode off: an explicit sandbox: off, and which), " +
      "or the shell tool's sandbox caps memory per process only (mode on: no memory cgroup could be made)",
  ),
  "loop.tick": z.strictObject({
    tick: count,
    prompt: z.string(),
    interval_ms: nullableMs.describe("null for a self-paced loop"),
    times: count.nullable(),
  }),
  "loop.end": z.strictObject({
    reason: z.string().nullable(),
    status: z.enum(["paused", "done"]),
    ticks: count,
  }),
  "heartbeat.tick": z.strictObject({ tick: count, prompt: z.string(), interval_ms: count }),
  "plugin.error": z.strictObject({ plugin: z.string(), hook: z.string().nullable(), error: z.string() }),
  "provider.retry": z.strictObject({
    attempt: count,
    delay_ms: count,
    status: z.number().int().nullable().describe("The HTTP status, null for a network error"),
    error: z.string(),
    model: z.string().describe(
      "Present when the next attempt goes to another model: the model.fallback one it switches to",
    ).exactOptional(),
  }),
  "store.retry": z.strictObject({
    operation: z.string(),
    attempt: count,
    delay_ms: count,
    elapsed_ms: count,
    budget_ms: count.describe("store.retry"),
    error: z.string(),
  }).describe(
    "A store operation met a transient fault (the database restarting, a lost connection, a lock held past " +
      "its timeout) and is tried again after delay_ms",
  ),
  "turn.end": z.strictObject({
    turn: count.describe("The step's number, as on its turn.start"),
    usage: usage.nullable().describe("null when the step's model call failed or was stopped"),
    cost_usd: costUsd.describe(
      "What this model call cost by the price table or model.pricing; null when the model has no known " +
        "price or the provider reported no usage",
    ),
    finish_reason: z.string(),
  }).describe("The step's model call ended (every turn.start has one, also when the call fails)"),
  "session.end": z.strictObject({ status: sessionStatus, reason: z.string() }),
  "agent.start": z.strictObject({
    agent: z.string().describe("The agent's name (agents: in the job)"),
    child_session_id: z.string().describe("The child session doing the delegated task"),
    tool_call_id: z.string().describe("The delegate call it answers"),
    depth: count.describe("1 for a task of the job's own model, 2 for one its subagent delegated, …"),
  }),
  "agent.end": z.strictObject({
    agent: z.string(),
    child_session_id: z.string(),
    tool_call_id: z.string(),
    status: z.enum(["success", "failed", "limit", "interrupted"]),
    terminal_reason: z.string(),
    usage: usage.describe("Tokens of the child and of its own children"),
    cost_usd: costUsd,
  }),
  result: runResultFields.describe("The result object (as --output json prints it); the last event of a run"),
};

const envelope = {
  schema_version: z.literal(SCHEMA_VERSION).describe(
    "Version of this format: bumped when a field or event type is renamed or removed, or a field changes meaning or type",
  ),
  session_id: z.string(),
  seq: z.number().int().positive().describe("Per session, increasing from 1 within a process"),
  ts: z.iso.datetime().describe("When it was emitted (UTC, ISO 8601)"),
};

/** The result object: `hermes run --output json`, RPC `session.prompt` and `job.run`, ACP `_meta`. */
export const runResult = z.strictObject({
  type: z.literal("result"),
  schema_version: envelope.schema_version,
  session_id: z.string().describe("Empty when the run stopped before it had a session (exit 2)"),
  ...runResultFields.shape,
});

type Schema = Record<string, unknown>;

function jsonSchemaOf(schema: z.ZodType): Schema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    // Leaves out what says nothing to a reader: the safe-integer bounds of every integer, and the regular
    // expression that spells out `format: date-time`.
    override: ({ jsonSchema }) => {
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.format === "date-time") delete jsonSchema.pattern;
    },
  }) as Schema;
  return rest;
}

/** One event of type `type` as listeners see it. */
function eventSchema(type: keyof typeof eventFields): z.ZodType {
  const fields = eventFields[type];
  const head = { type: z.literal(type), ...envelope };
  const options = fields instanceof z.ZodUnion
    ? [...fields.options] as z.ZodObject[]
    : [fields as z.ZodObject];
  const members = options.map((o) => z.strictObject({ ...head, ...o.shape }));
  const one = members.length === 1 ? members[0]! : z.union(members);
  return fields.description ? one.describe(fields.description) : one;
}

export function resultJsonSchema(): Schema {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "Hermes result",
    // The last stream-json line is the same object with its event envelope's seq and ts: one schema
    // validates both, so a reader need not strip them.
    ...jsonSchemaOf(
      runResult.extend({
        seq: envelope.seq.optional().describe("Only on the stream-json line: the event's seq"),
        ts: envelope.ts.optional().describe("Only on the stream-json line: when it was emitted"),
      }).describe(
        `The result object of a run, schema_version ${SCHEMA_VERSION}: hermes run --output json, the last ` +
          "line of --output stream-json (with seq and ts), RPC session.prompt and job.run",
      ),
    ),
  };
}

/** Every event: a `oneOf` over one `$defs` entry per event type. */
export function eventsJsonSchema(): Schema {
  const types = Object.keys(eventFields) as (keyof typeof eventFields)[];
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "Hermes events",
    description: `One event of --output stream-json (one per line), of an RPC "event" notification's ` +
      `params, schema_version ${SCHEMA_VERSION}. Each event type is one entry of $defs.`,
    oneOf: types.map((type) => ({ $ref: `#/$defs/${type}` })),
    $defs: Object.fromEntries(types.map((type) => [type, jsonSchemaOf(eventSchema(type))])),
  };
}

/** Exact type equality: changing one side without the other fails type checking. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Holds<T extends true> = T;
export type _SameAsCore = [
  Holds<Equal<z.output<typeof usage>, Required<Usage>>>,
  Holds<Equal<z.output<typeof toolCall>, ToolCall>>,
  Holds<Equal<z.output<typeof sessionStatus>, SessionStatus>>,
];
