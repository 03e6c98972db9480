/**
 * The one door every tool call goes through — built-in, plugin and MCP alike, in this order:
 *
 * 1. the job's rules, evaluated once per call: the tool's `permitted` (an MCP server's or a plugin entry's
 *    `tools: {allow, deny}`) and what the call `needs` (`tools.shell.allow/deny`, the `paths` roots,
 *    `http_fetch.hosts`): a verdict, and the scope the call would run in;
 * 2. a call outside an allow-list is put to the approver (the job's `approval:`, else the front-end's:
 *    the ACP editor, an RPC client that supports it); without one, or when it says no, the call is denied
 *    with a tool result naming the rule to add. A call a deny rule forbids is never asked about. The
 *    approver is shown the verdict's `subject` (where the call leads, e.g. a file's real path) and the
 *    approved call runs in a scope of that object alone; nothing is remembered for the next call;
 * 3. the `pre_tool_call` hooks (block, or modify the arguments: modified arguments run under the rules
 *    alone, an approval covers only the arguments it was asked about);
 * 4. the tool itself, bounded by the call's signal, within the scope handed to it (it is never told
 *    whether the call was approved); it checks that scope on the object it actually uses (scoped_open.ts
 *    for files, every redirect hop for http_fetch, the command line as judged for shell);
 * 5. `tool.call`, `tool.denied` and `tool.result` events and `post_tool_call`, written to the session's
 *    outlets (the store view and the event emitter), where secrets are replaced.
 */
import { errorMessage } from "../core/errors.ts";
import type { EventInput } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import type { ToolCall } from "../core/types.ts";
import {
  ALLOWED,
  type CallNeeds,
  NO_SCOPE,
  runTool,
  type Tool,
  type ToolContext,
  type ToolOutcome,
  type ToolScope,
} from "./tool.ts";

/** A call outside the job's allow-lists, put to an approver. */
export interface ApprovalRequest {
  session_id: string;
  tool: string;
  tool_call_id: string;
  /** The MCP server of the tool, when it has one. */
  server?: string;
  args: Record<string, unknown>;
  /** Why the rules do not allow it. */
  reason: string;
  /** The rule the job could add to allow such calls without asking. */
  rule: string;
  /** What the call acts on as it will be used (a file's real path), when the tool says; approved alone. */
  subject?: string;
  /** The turn's signal: aborted when the turn is cancelled or times out. */
  signal: AbortSignal;
}

/**
 * Resolves true to run the call once, false for no, null when there is nobody to ask (an RPC client that
 * does not answer approvals: the denial then says how to allow the call). A rejection counts as a no.
 */
export type ToolAsker = (request: ApprovalRequest) => Promise<boolean | null>;

export interface ToolGateOptions {
  tools: readonly Tool[];
  hooks: Hooks;
  /** The session's event outlet. */
  emit: (event: EventInput) => void;
  /** Asked about calls outside the allow-lists; absent: they are denied. */
  asker?: ToolAsker | undefined;
  /** Names the approver in denials ("the approval command", "the editor"). */
  askerName?: string | undefined;
  /**
   * Around each execution of a tool (a call the rules, the approver and the hooks let through): recording
   * it into a cassette, or serving its result from one (runtime/cassette/). Absent: the tool just runs.
   */
  execute?: ExecuteTool | undefined;
}

/** A call about to be executed, with the arguments it runs with (after pre_tool_call). */
export interface ExecutedCall {
  tool: string;
  tool_call_id: string;
  server?: string;
  args: Record<string, unknown>;
}

/** Executes `call`: through `run` (the tool itself), or not. A throw ends the turn with that error. */
export type ExecuteTool = (call: ExecutedCall, run: () => Promise<ToolOutcome>) => Promise<ToolOutcome>;

export interface GateCallOptions extends Omit<ToolContext, "tool_call_id"> {
  /**
   * Stores the call's result before `tool.result` is emitted; returns the outcome as kept (a repeated read
   * is kept as a short note).
   */
  keep(
    outcome: ToolOutcome,
    call: { tool: Tool | undefined; args: Record<string, unknown> },
  ): Promise<ToolOutcome>;
}

export class ToolGate {
  #o: ToolGateOptions;
  #tools: Map<string, Tool>;
  /** What the model is offered: the permitted tools, in one stable order (a warm provider prefix cache). */
  readonly offered: readonly Tool[];

  constructor(options: ToolGateOptions) {
    this.#o = options;
    this.#tools = new Map(options.tools.map((t) => [t.spec.name, t]));
    this.offered = [...this.#tools.values()].filter((t) => t.permitted?.allowed ?? true)
      .sort((a, b) => a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0);
  }

  /** Runs one call of the model through the rules, the approver, the hooks and the tool. */
  async call(call: ToolCall, options: GateCallOptions): Promise<ToolOutcome> {
    const { hooks, emit } = this.#o;
    const { keep, ...context } = options;
    const started = performance.now();
    const parsed = parseArguments(call);
    let args = parsed.args;
    const tool = this.#tools.get(call.name);
    const server = tool?.server ? { server: tool.server } : {};
    emit({ type: "tool.call", tool: call.name, tool_call_id: call.id, args, ...server });
    let outcome: ToolOutcome | undefined = parsed.error;
    if (!outcome && !tool) outcome = { status: "error", content: `error: unknown tool "${call.name}"` };
    // The scope the call runs in: what the rules grant, or what an approval grants this call alone.
    let scope: ToolScope | undefined;
    if (!outcome) {
      const needs = needsOf(tool!, args);
      if (needs.verdict.allowed) scope = needs.scope;
      else {
        const answer = await this.#ask(call, tool!, args, needs.verdict, context);
        // Approved: the call runs in the scope the tool declared for it alone (the approved object, the
        // approved host); nothing is remembered, so the next such call is asked about again.
        if (answer === true) scope = needs.scope;
        else outcome = this.#denial(needs.verdict, { asked: answer === false });
      }
    }
    if (!outcome) {
      const decision = await hooks.preToolCall({
        session_id: context.session_id,
        tool_name: call.name,
        args,
        tool_call_id: call.id,
      });
      if (decision.action === "block") {
        outcome = { status: "denied", content: `blocked: ${decision.message}` };
      } else if (decision.action === "modify") {
        // Modified arguments run under the rules alone: an approval covered only what it was asked about.
        args = decision.args;
        const needs = needsOf(tool!, args);
        scope = needs.scope;
        if (!needs.verdict.allowed) {
          outcome = this.#denial(needs.verdict, {
            prefix: "the arguments pre_tool_call gave are outside the rules: ",
          });
        }
      }
    }
    if (!outcome) {
      const runArgs = args;
      const runScope = scope!;
      const run = async (): Promise<ToolOutcome> => {
        try {
          return await runTool(tool!, runArgs, { ...context, tool_call_id: call.id }, runScope);
        } catch (error) {
          context.signal.throwIfAborted();
          return { status: "error", content: `error: ${errorMessage(error)}` };
        }
      };
      const { execute } = this.#o;
      outcome = execute
        ? await execute({ tool: call.name, tool_call_id: call.id, ...server, args: runArgs }, run)
        : await run();
    }
    outcome = await keep(outcome, { tool, args });
    const durationMs = Math.round(performance.now() - started);
    if (outcome.status === "denied") {
      emit({
        type: "tool.denied",
        tool: call.name,
        tool_call_id: call.id,
        reason: outcome.content,
        ...server,
      });
    }
    emit({
      type: "tool.result",
      tool: call.name,
      tool_call_id: call.id,
      status: outcome.status,
      content: outcome.content,
      duration_ms: durationMs,
      ...server,
    });
    await hooks.postToolCall({
      session_id: context.session_id,
      tool_name: call.name,
      args,
      result: outcome.content,
      duration_ms: durationMs,
      status: outcome.status,
    });
    return outcome;
  }

  async #ask(
    call: ToolCall,
    tool: Tool,
    args: Record<string, unknown>,
    verdict: { reason: string; rule: string | null; subject?: string },
    context: { session_id: string; signal: AbortSignal },
  ): Promise<boolean | null> {
    const { asker } = this.#o;
    const { signal } = context;
    if (!asker || verdict.rule === null) return null;
    const allowed = await asker({
      session_id: context.session_id,
      tool: call.name,
      tool_call_id: call.id,
      ...(tool.server ? { server: tool.server } : {}),
      args,
      reason: verdict.reason,
      rule: verdict.rule,
      ...(verdict.subject !== undefined ? { subject: verdict.subject } : {}),
      signal,
    }).catch(() => false);
    signal.throwIfAborted();
    return allowed;
  }

  #denial(
    verdict: { reason: string; rule: string | null },
    options: { asked?: boolean; prefix?: string } = {},
  ): ToolOutcome {
    const reason = `${options.prefix ?? ""}${verdict.reason}`;
    if (verdict.rule === null) return { status: "denied", content: `denied: ${reason}` };
    const { askerName } = this.#o;
    const content = options.asked
      ? `denied: ${reason}: ${askerName ?? "the approver"} rejected the call; to allow such calls without ` +
        `asking, add ${verdict.rule} to the job`
      : `denied: ${reason}; to allow it, add ${verdict.rule} to the job, or name an approver ` +
        "(approval: {command | url})";
    return { status: "denied", content };
  }
}

/**
 * What a call needs under the job's rules, evaluated once: the tool's `permitted`, then its own `needs`
 * (a shell command's policy, a path's roots, a URL's hosts).
 */
export function needsOf(tool: Tool, args: Record<string, unknown>): CallNeeds {
  const permitted = tool.permitted ?? ALLOWED;
  if (!permitted.allowed) return { verdict: permitted, scope: NO_SCOPE };
  return tool.needs?.(args) ?? { verdict: ALLOWED, scope: NO_SCOPE };
}

function parseArguments(call: ToolCall): { args: Record<string, unknown>; error?: ToolOutcome } {
  try {
    const parsed = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new Error("not an object");
    }
    return { args: parsed };
  } catch (error) {
    return {
      args: {},
      error: {
        status: "error",
        content: `error: invalid arguments for ${call.name}: ${errorMessage(error)}`,
      },
    };
  }
}
