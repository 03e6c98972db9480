/**
 * Subagents: the `delegate` tool a job with `agents:` offers its model. Each call runs the named agent's task
 * as a child session of the calling one (`parent_id`), through the same run path as any job, with at most the
 * parent's tools and the parent's rules for them. A run's delegate calls share one cap
 * (`limits.max_concurrent_agents`); a chain of delegations stops at `limits.max_agent_depth`. The child's
 * answer is the tool result; its failure is a tool error for the parent, never the parent's failure.
 */
import type { AgentEntry, JobFile } from "../config/job_schema.ts";
import type { ResolvedJob } from "../config/job.ts";
import { parseDuration } from "../core/duration.ts";
import { errorMessage } from "../core/errors.ts";
import type { EventInput } from "../core/events.ts";
import type { RunResult } from "../session/outcome.ts";
import type { Tool, ToolOutcome } from "../tools/tool.ts";

export const DEFAULT_MAX_CONCURRENT_AGENTS = 4;
export const DEFAULT_MAX_AGENT_DEPTH = 2;

type Usage = RunResult["usage"];

/** One delegated task as the parent's result lists it. */
export interface AgentRun {
  name: string;
  session_id: string;
  status: RunResult["status"];
  usage: Usage;
  cost_usd: number | null;
  /** The task's own worktree (the agent's `workspace: {isolation: worktree}`). */
  workspace?: NonNullable<RunResult["workspace"]>;
}

/** Where a run stands in a tree of delegations: the root's caps, and how deep this run is. */
export interface DelegationScope {
  depth: number;
  maxDepth: number;
  maxConcurrent: number;
}

export interface DelegateOptions {
  /** The delegating run's job (after its worktree, if any): what each child's job is cut from. */
  job: ResolvedJob;
  scope: DelegationScope;
  /** A fresh session id for a child (known before it opens, for agent.start). */
  newId: () => string;
  /** Runs a child's task: the App's run path with the child's job, prompt, id and parent. */
  run: (child: ChildRun) => Promise<RunResult>;
  /** What the delegating session keeps of its tasks, so a resumed run finishes each one once. */
  ledger: TaskLedger;
  /** Emits an event of the delegating session. */
  emit: (event: EventInput<"agent.start" | "agent.end">) => void;
}

/**
 * The record of which child session a delegate call started, kept in the delegating session before the
 * child opens: a run killed mid-delegation and resumed runs the call again with the same id, and finds its
 * child there instead of starting a second one.
 */
export interface TaskLedger {
  /** The child session the call `toolCallId` started, if it started one. */
  started(toolCallId: string): Promise<string | undefined>;
  start(toolCallId: string, childId: string): Promise<void>;
  /** How the child's session stands: its result when it ended with one, whether it was opened at all. */
  child(childId: string): Promise<{ result?: RunResult; opened: boolean }>;
}

export interface ChildRun {
  job: ResolvedJob;
  prompt: string;
  id: string;
  /** The child's session was opened by a run that was killed: it is resumed, not started again. */
  resume: boolean;
  model?: string;
  scope: DelegationScope;
  signal: AbortSignal;
}

export interface Delegation {
  tool: Tool;
  /** The tasks delegated so far, in the order they started. */
  readonly runs: readonly AgentRun[];
}

/** The scope of a root run of `spec`: its caps (defaults filled in), at depth 0. */
export function rootScope(spec: JobFile): DelegationScope {
  return {
    depth: 0,
    maxDepth: spec.limits?.max_agent_depth ?? DEFAULT_MAX_AGENT_DEPTH,
    maxConcurrent: spec.limits?.max_concurrent_agents ?? DEFAULT_MAX_CONCURRENT_AGENTS,
  };
}

export function delegation(options: DelegateOptions): Delegation {
  const agents = options.job.spec.agents ?? {};
  const names = Object.keys(agents);
  const runs: AgentRun[] = [];
  const slots = new Semaphore(options.scope.maxConcurrent);
  const tool: Tool = {
    concurrent: true,
    resumable: true,
    spec: {
      name: "delegate",
      description:
        "Hand a task to a subagent; its final answer is the result. Several delegate calls in one " +
        "step run at the same time. The agents:\n" +
        names.map((name) => `- ${name}: ${agents[name]!.description}`).join("\n"),
      parameters: {
        type: "object",
        properties: {
          agent: { type: "string", enum: names, description: "The agent's name" },
          prompt: { type: "string", description: "The task, with everything the agent needs to know" },
        },
        required: ["agent", "prompt"],
        additionalProperties: false,
      },
    },
    async run(args, context): Promise<ToolOutcome> {
      const name = typeof args.agent === "string" ? args.agent : "";
      const prompt = typeof args.prompt === "string" ? args.prompt : "";
      const agent = agents[name];
      if (!agent) {
        return {
          status: "error",
          content: `error: no agent named "${name}"; the agents are: ${names.join(", ")}`,
        };
      }
      if (prompt.trim() === "") return { status: "error", content: "error: the prompt is empty" };
      const depth = options.scope.depth + 1;
      if (depth > options.scope.maxDepth) {
        return {
          status: "error",
          content:
            `error: Cannot delegate to "${name}": this session is at depth ${options.scope.depth} and ` +
            `limits.max_agent_depth is ${options.scope.maxDepth}; do the task yourself`,
        };
      }
      const toolCallId = context.tool_call_id ?? "";
      // A call a killed run made already: its child is taken up (its stored result, or its session resumed).
      // Only for a call run again on resume: models that number their calls reuse ids across steps.
      const earlier = toolCallId && context.resumed ? await options.ledger.started(toolCallId) : undefined;
      const found = earlier ? await options.ledger.child(earlier) : { opened: false };
      const id = earlier ?? options.newId();
      if (!earlier && toolCallId) await options.ledger.start(toolCallId, id);
      const release = found.result ? () => {} : await slots.acquire(context.signal);
      options.emit({
        type: "agent.start",
        agent: name,
        child_session_id: id,
        tool_call_id: toolCallId,
        depth,
      });
      let result: RunResult | undefined = found.result;
      let crash: unknown;
      try {
        result ??= await options.run({
          job: childJob(options.job, name, agent),
          prompt,
          id,
          resume: found.opened,
          ...(agent.model ? { model: agent.model } : {}),
          scope: { ...options.scope, depth },
          signal: context.signal,
        });
      } catch (error) {
        // The parent's own cancel or timeout ends the parent's turn; anything else is the child's failure.
        context.signal.throwIfAborted();
        crash = error;
      } finally {
        release();
      }
      const total = result ? totalOf(result) : { usage: ZERO, cost_usd: 0 };
      const status = result?.status ?? "failed";
      runs.push({
        name,
        session_id: id,
        status,
        usage: total.usage,
        cost_usd: total.cost_usd,
        ...(result?.workspace ? { workspace: result.workspace } : {}),
      });
      options.emit({
        type: "agent.end",
        agent: name,
        child_session_id: id,
        tool_call_id: toolCallId,
        status,
        terminal_reason: result?.terminal_reason ?? "start_failed",
        usage: total.usage,
        cost_usd: total.cost_usd,
      });
      if (!result) {
        return { status: "error", content: `error: agent "${name}" could not run: ${errorMessage(crash)}` };
      }
      const where = worktreeNote(result.workspace);
      if (result.status === "success") {
        return {
          status: "ok",
          content: (result.output !== null ? JSON.stringify(result.output) : result.final) + where,
        };
      }
      return {
        status: "error",
        content: `error: agent "${name}" (session ${id}) ended ${result.status} (${result.terminal_reason})` +
          (result.error ? `: ${result.error}` : "") + (result.final ? `\n${result.final}` : "") + where,
      };
    },
  };
  return { tool, runs };
}

/**
 * Where a task with a worktree of its own left its work, for the model that delegated it (which merges or
 * reviews it): after the answer, so a structured answer stays the first line's JSON.
 */
function worktreeNote(workspace: RunResult["workspace"]): string {
  if (!workspace) return "";
  const kept = workspace.kept ? `worktree ${workspace.path}` : "no worktree kept";
  return `\n\n[the agent worked on branch ${workspace.branch} (${kept}): ${workspace.commits.length} ` +
    `commit(s) since ${workspace.base.slice(0, 12)}, changed files: ${
      workspace.changed_files.join(", ") || "none"
    }]`;
}

/**
 * A child's job: the parent's, with the agent's prompt, limits and tools. Its tools are the parent's own
 * entries (so the parent's rules for them), only those the agent names; plugins stay (their hooks bind the
 * child as they bind the parent), MCP servers only when the agent takes all the parent's tools. What
 * belongs to the parent's run alone (prompt, steps, output, schedule, notifications, recording, its own
 * worktree) is left out: the child works in the parent's directory, which the parent's run already holds,
 * unless the agent has a worktree of its own (made from that directory's checkout).
 */
export function childJob(parent: ResolvedJob, name: string, agent: AgentEntry): ResolvedJob {
  const {
    prompt: _prompt,
    steps: _steps,
    output: _output,
    schedule: _schedule,
    notify: _notify,
    concurrency: _concurrency,
    record: _record,
    loops: _loops,
    heartbeat: _heartbeat,
    workspace: _workspace,
    limits,
    system: _system,
    tools,
    mcp_servers,
    ...rest
  } = parent.spec;
  const picked = agent.tools === undefined ? tools : Object.fromEntries(
    Object.entries(tools ?? {}).filter(([tool]) => agent.tools!.includes(tool as never)),
  );
  const spec: JobFile = {
    ...rest,
    name: `${parent.spec.name}.${name}`.slice(0, 64),
    ...(agent.system !== undefined ? { system: agent.system } : {}),
    ...(picked && Object.keys(picked).length ? { tools: picked } : {}),
    ...(agent.tools === undefined && mcp_servers ? { mcp_servers } : {}),
    limits: childLimits(agent.limits, limits),
    // The task's own worktree, or the parent's directory, whose writer lock the parent's run holds already.
    workspace: agent.workspace?.isolation === "worktree" ? agent.workspace : { shared: true },
  };
  return { ...parent, spec };
}

/**
 * A task's limits: the agent's, each no looser than the parent's (which hold the trust policy's ceilings),
 * and the parent's where the agent sets none. The parent's cost cap is the task's too (so its model calls
 * are priced); the run path ties the task's budget to the parent's, so the cap holds for the whole tree.
 */
function childLimits(
  agent: AgentEntry["limits"],
  parent: JobFile["limits"],
): NonNullable<JobFile["limits"]> {
  const least = <T>(a: T | undefined, b: T | undefined, size: (v: T) => number): T | undefined =>
    a === undefined ? b : b === undefined ? a : size(a) <= size(b) ? a : b;
  const out: NonNullable<JobFile["limits"]> = {};
  const turns = least(agent?.max_turns, parent?.max_turns, (n) => n);
  const tokens = least(agent?.max_tokens, parent?.max_tokens, (n) => n);
  const timeout = least(agent?.timeout, parent?.timeout, parseDuration);
  if (turns !== undefined) out.max_turns = turns;
  if (tokens !== undefined) out.max_tokens = tokens;
  if (timeout !== undefined) out.timeout = timeout;
  if (parent?.max_cost_usd !== undefined) out.max_cost_usd = parent.max_cost_usd;
  return out;
}

/** A result's usage and cost with those of the tasks it delegated. */
export function totalOf(result: RunResult): { usage: Usage; cost_usd: number | null } {
  return result.total ?? { usage: result.usage, cost_usd: result.cost_usd };
}

/** The result of a run that delegated `runs`: with `agents` and `total` (its own plus theirs). */
export function withAgents(result: RunResult, runs: readonly AgentRun[]): RunResult {
  if (runs.length === 0) return result;
  let usage = result.usage;
  let cost: number | null = result.cost_usd;
  for (const run of runs) {
    usage = addUsage(usage, run.usage);
    cost = cost === null || run.cost_usd === null ? null : cost + run.cost_usd;
  }
  return { ...result, agents: [...runs], total: { usage, cost_usd: cost } };
}

const ZERO: Usage = {
  prompt_tokens: 0,
  completion_tokens: 0,
  cached_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
};

function addUsage(a: Usage, b: Usage): Usage {
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    cached_tokens: a.cached_tokens + b.cached_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    reasoning_tokens: a.reasoning_tokens + b.reasoning_tokens,
  };
}

/** At most `size` holders at once; a waiter whose signal aborts stops waiting. */
class Semaphore {
  #free: number;
  #waiting: Array<() => void> = [];
  constructor(size: number) {
    this.#free = size;
  }

  async acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.#free > 0) this.#free--;
    else {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal.removeEventListener("abort", abort);
          resolve();
        };
        const abort = () => {
          this.#waiting = this.#waiting.filter((w) => w !== wake);
          reject(signal.reason);
        };
        signal.addEventListener("abort", abort, { once: true });
        this.#waiting.push(wake);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}
