/**
 * The API's request and response shapes as zod schemas: the routes validate requests with them, and the
 * OpenAPI document (openapi.ts) is generated from them, so the two cannot drift apart. Response fields are
 * the ones the CLI prints (`runs show --json`, `sessions show --json`) and the result object's.
 */
import { z } from "zod";
import { runResult } from "../core/event_schema.ts";

export const Problem = z.strictObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  instance: z.string().optional(),
}).describe("RFC 9457 problem details");

export const SubmitBody = z.strictObject({
  job: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).describe(
    "A job's name in the server's jobs folder (NAME for NAME.yaml), or an inline job object (admin only)",
  ),
  inputs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  key: z.string().min(1).optional().describe(
    "Idempotency key: the same key returns the run it first submitted",
  ),
  priority: z.number().int().optional().describe("Higher runs first (default 0)"),
});

export const PromptBody = z.strictObject({ text: z.string().min(1).describe("The user's message") });

/** Every status a queued run shows (`waiting_approval` is a running run holding a pending approval). */
export const RUN_STATUSES = [
  "queued",
  "running",
  "waiting_approval",
  "success",
  "failed",
  "limit",
  "interrupted",
  "cancelled",
  "crashed",
] as const;

export const RunQuery = z.object({
  // An unknown status is the client's mistake (a typo would otherwise list nothing, silently).
  status: z.enum(RUN_STATUSES).optional(),
  job: z.string().optional(),
  limit: z.coerce.number().int().positive().max(1000).optional(),
});

export const SessionQuery = z.object({
  job: z.string().optional(),
  status: z.string().optional(),
  limit: z.coerce.number().int().positive().max(1000).optional(),
  archived: z.enum(["true", "false"]).optional(),
});

const at = z.number().int().describe("Epoch milliseconds");

export const Run = z.strictObject({
  id: z.string(),
  job: z.string(),
  job_path: z.string().nullable(),
  inputs: z.record(z.string(), z.string()),
  key: z.string().nullable(),
  priority: z.number().int(),
  not_before: at.nullable(),
  status: z.enum([
    "queued",
    "running",
    "waiting_approval",
    "success",
    "failed",
    "limit",
    "interrupted",
    "cancelled",
    "crashed",
  ]).describe("waiting_approval: running, with a tool call parked for a decision (GET /v1/approvals)"),
  attempts: z.number().int(),
  on_crash: z.enum(["skip", "rerun"]),
  group: z.string().nullable(),
  group_limit: z.number().int().nullable(),
  model: z.string().nullable(),
  labels: z.record(z.string(), z.string()),
  trigger: z.enum(["cli", "schedule", "webhook", "api"]).describe(
    "What submitted it: hermes submit, a daemon's cron slot, a webhook delivery, the HTTP API",
  ),
  pinned_to: z.string().nullable().describe(
    "The nonce of the only worker that may claim it: a daemon's cron slot, run by the daemon holding the slot",
  ),
  holder: z.strictObject({ host: z.string(), pid: z.number().int(), started: z.string(), nonce: z.string() })
    .nullable().describe("The worker that holds it while it runs"),
  lease_expires_at: at.nullable(),
  cancel_requested: z.boolean(),
  session_id: z.string().nullable(),
  result: runResult.nullable().describe("The result object once it ended (null if it never ran)"),
  exit_code: z.number().int().nullable(),
  note: z.string().nullable(),
  submitted_at: at,
  started_at: at.nullable(),
  finished_at: at.nullable(),
}).describe("A queued run, as `hermes runs show --json` prints it");

export const Submitted = Run.extend({
  deduplicated: z.boolean().describe("The key named a run submitted before: this is that run"),
});

export const HookIgnored = z.strictObject({
  status: z.literal("ignored"),
  event: z.string().describe("The delivery's event (X-GitHub-Event or X-Hermes-Event)"),
  reason: z.string(),
}).describe("A delivery acknowledged without starting a run: its event is not one the trigger lists");

export const RunList = z.strictObject({ runs: z.array(Run) });

const time = z.string().describe("ISO 8601 time");

export const SessionSummary = z.strictObject({
  id: z.string(),
  job: z.string(),
  status: z.string(),
  terminal_reason: z.string().nullable(),
  model: z.string().nullable(),
  parent_id: z.string().nullable(),
  created_at: time,
  updated_at: time,
  ended_at: time.nullable(),
  archived: z.boolean(),
  archived_at: time.nullable(),
  turns: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  cached_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  cost_usd: z.number().nullable(),
  labels: z.record(z.string(), z.string()),
});

export const SessionList = z.strictObject({
  sessions: z.array(SessionSummary.extend({ live: z.boolean().describe("Open in this server") })),
});

export const SessionView = z.strictObject({
  session: SessionSummary,
  live: z.boolean(),
  busy: z.boolean(),
  occupancy: z.record(z.string(), z.unknown()).nullable().describe("How full its context is"),
});

export const Message = z.strictObject({
  seq: z.number().int(),
  pos: z.number(),
  role: z.enum(["system", "user", "assistant", "tool"]),
  kind: z.string(),
  active: z.boolean(),
  content: z.string(),
  tool_calls: z.array(z.strictObject({ id: z.string(), name: z.string(), arguments: z.string() })).nullable(),
  tool_call_id: z.string().nullable(),
  name: z.string().nullable(),
  prompt_tokens: z.number().int().nullable(),
  completion_tokens: z.number().int().nullable(),
  created_at: time,
});

export const Messages = z.strictObject({ session_id: z.string(), messages: z.array(Message) });

export const APPROVAL_STATUSES = ["pending", "allowed", "denied", "expired", "cancelled"] as const;

export const ApprovalQuery = z.object({
  status: z.enum([...APPROVAL_STATUSES, "all"]).optional().describe("Default pending (whose time is not up)"),
  run_id: z.string().optional(),
  limit: z.coerce.number().int().positive().max(1000).optional(),
});

export const DecideBody = z.strictObject({
  decision: z.enum(["allow", "deny"]).describe("allow runs the call once; deny answers the model a denial"),
  reason: z.string().max(2000).optional().describe("Kept with the decision and sent in approval.resolved"),
});

export const Approval = z.strictObject({
  id: z.string(),
  run_id: z.string().nullable().describe("The queued run waiting for it (null for a run not from the queue)"),
  session_id: z.string(),
  job: z.string(),
  tool: z.string(),
  tool_call_id: z.string(),
  server: z.string().nullable().describe("The MCP server of the tool, when it has one"),
  arguments: z.record(z.string(), z.unknown()).describe("The call's arguments, secrets replaced"),
  subject: z.string().nullable().describe("What the call acts on as it will run (a file's real path)"),
  reason: z.string().describe("Why the job's rules do not allow it"),
  rule: z.string().describe("The rule the job could add to allow such calls without asking"),
  status: z.enum(APPROVAL_STATUSES),
  decision_reason: z.string().nullable(),
  decided_by: z.string().nullable().describe("The id of the token that decided it"),
  created_at: at,
  expires_at: at.describe("When the timeout denies it"),
  decided_at: at.nullable(),
}).describe("A tool call outside a job's rules parked for a decision (approval: {api: true})");

export const ApprovalList = z.strictObject({ approvals: z.array(Approval) });

export const Result = runResult;

export const Health = z.strictObject({ status: z.literal("ok"), version: z.string() });
export const Ready = z.strictObject({ status: z.literal("ready") });
