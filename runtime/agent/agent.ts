/**
 * The agent loop: one live session. A prompt runs as one *turn*; a turn runs *steps* — one model call and the
 * tool calls it asks for — until the model answers without tools. Every message is committed as it happens;
 * turns are serialised per session. (The `turn.start`/`turn.end` events and the plugin hooks' `turn` field
 * keep their published names: they mark and number steps.)
 */
import type { Clock } from "../core/clock.ts";
import { errorMessage, ValidationError } from "../core/errors.ts";
import type { EventBus, EventInput } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import type { HostEnv } from "../core/host_env.ts";
import { type Budget, LimitError } from "./limits.ts";
import { costOf, type Price } from "../providers/pricing.ts";
import type { Logger } from "../core/log.ts";
import {
  type ModelRequest,
  type OutputSchema,
  type Provider,
  ProviderError,
  type RetryInfo,
  type ServerWindow,
} from "../providers/provider.ts";
import { formatUsd, roundUsd } from "../core/usd.ts";
import { SpendCap } from "./spend_cap.ts";
import type { AgentLike, Compactor, PromptOptions, PromptResult } from "./seams.ts";
import { parseSlash, type SlashCommand } from "./slash.ts";
import type { AppendMessage, SessionStore } from "../store/store.ts";
import type { Tool } from "../tools/tool.ts";
import { type ExecuteTool, type ToolAsker, ToolGate } from "../tools/gate.ts";
import type { Message, StoredMessage, ToolCall, Usage } from "../core/types.ts";
import { Transcript } from "./_transcript.ts";
import type { StoredOutput } from "./stored_output.ts";
import { sentTokens, TokenRatio, truncatedTo } from "./real_window.ts";

export interface AgentOptions {
  store: SessionStore;
  sessionId: string;
  /** A session created just now: its active transcript as written then (not read back at the first turn). */
  transcript?: readonly StoredMessage[];
  provider: Provider;
  model: string;
  /** Every tool of the session (built-in, plugin, MCP); each call goes through one gate (tools/gate.ts). */
  tools: readonly Tool[];
  /** Asked about tool calls outside the job's allow-lists; absent: they are denied. */
  asker?: ToolAsker;
  /** How denials name the asker ("the approval command", "the editor"). */
  askerName?: string;
  /** Around each tool execution (recording, replay: runtime/cassette/); absent: tools just run. */
  executeTool?: ExecuteTool;
  hooks: Hooks;
  events: EventBus;
  clock: Clock;
  log: Logger;
  budget: Budget;
  /**
   * Where tools run: the job directory, the environment given to subprocesses, and Hermes's own environment
   * (what host programs are found and started with).
   */
  toolContext: { job_dir: string; env: Record<string, string>; host_env: HostEnv };
  compactor?: Compactor;
  /**
   * The window the provider's server runs, asked by whoever built the provider as soon as it existed
   * (openSession); the first step awaits it before its compaction check, null when the probe failed, timed
   * out or was stopped. Absent: the first step asks the provider itself.
   */
  serverWindow?: Promise<ServerWindow | null>;
  /**
   * Answer a repeated `read_file` of an unchanged file whose latest result is still verbatim in the
   * transcript with a short note instead of a second copy (`tools.read_file.dedup`, default true).
   */
  readDedup?: boolean;
  /**
   * Most bytes of tool results the session stores, all calls and runs together (a policy's
   * `sandbox_limits.max_session_output`); past it results are stored cut (stored_output.ts). Absent: no ceiling.
   */
  maxSessionOutput?: number;
  maxOutputTokens?: number;
  temperature?: number;
  /** USD per million tokens of the model; null or absent: it has no known price (cost_usd null). */
  price?: Price | null;
  /**
   * `output.schema` to ask of the server itself (`response_format` json_schema), unless the session found it
   * refused; `structuredOutput` auto falls back to the prompt alone when the server refuses it (HTTP 400).
   */
  outputSchema?: OutputSchema;
  structuredOutput?: "auto" | "native" | "prompt";
  /** Aborts every turn (run timeout, SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** Streamed assistant text, for live output. */
  onDelta?: (text: string) => void;
}

export class Agent implements AgentLike {
  readonly sessionId: string;
  #o: AgentOptions;
  #gate: ToolGate;
  #commands = new Map<string, SlashCommand>();
  #queue: Promise<unknown> = Promise.resolve();
  #busy = false;
  /** Steps taken in this session: numbers `turn.start`/`turn.end` and the model-call hooks. */
  #step = 0;
  #transcript: Transcript;
  /** The ceiling on stored tool results, made with the first result kept (it is not needed before). */
  #storedOutput: Promise<StoredOutput> | undefined;
  /** The tool definitions every request carries, in one stable order (by name). */
  #toolSpecs: Tool["spec"][];
  /** chars/4 of the tool definitions: what every request carries besides the transcript. */
  #overheadTokens: number;
  /** The server's window, asked once per session (before its first call); settled to null on failure. */
  #serverWindow: Promise<ServerWindow | null> | undefined;
  /** Whether the server's window was applied (or found absent): compaction counts with it from then on. */
  #windowKnown = false;
  #tokenRatio = new TokenRatio();
  /** Whether requests carry `output.schema` natively; read from the store once (a refusal is remembered). */
  #native: boolean | undefined;

  constructor(options: AgentOptions) {
    this.#o = options;
    this.sessionId = options.sessionId;
    this.#transcript = new Transcript(options.store, options.sessionId, options.transcript);
    this.#gate = new ToolGate({
      tools: options.tools,
      hooks: options.hooks,
      emit: (event) => this.#emit(event),
      asker: options.asker,
      askerName: options.askerName,
      execute: options.executeTool,
    });
    // The prompt prefix stays byte-identical between requests (a warm provider cache): the gate offers the
    // same tools in the same order whatever order plugins and MCP servers registered them in.
    this.#toolSpecs = this.#gate.offered.map((t) => t.spec);
    this.#overheadTokens = Math.ceil(JSON.stringify(this.#toolSpecs).length / 4);
    this.addCommand({
      name: "status",
      description: "Show the session's status",
      run: () => this.#status(),
    });
    if (options.compactor) {
      const compactor = options.compactor;
      this.addCommand({
        name: "compress",
        description: "Compact the transcript now; optional focus text steers the summary",
        run: async (args, context) => {
          const outcome = await compactor.compact(this.sessionId, { focus: args, signal: context.signal });
          return outcome.changed
            ? `Compacted: ${outcome.before_tokens} → ${outcome.after_tokens} tokens, ${outcome.messages_removed} fewer messages, ${
              Math.round(outcome.occupancy * 100)
            }% of the compaction threshold`
            : `Nothing compacted: ${outcome.note ?? "no change"}`;
        },
      });
    }
  }

  get busy(): boolean {
    return this.#busy;
  }

  get budget(): Budget {
    return this.#o.budget;
  }

  addCommand(command: SlashCommand): void {
    this.#commands.set(command.name.toLowerCase(), command);
  }

  commands(): SlashCommand[] {
    return [...this.#commands.values()];
  }

  /** A slash command when the text is one, else a prompt. */
  input(text: string, options: PromptOptions): Promise<PromptResult> {
    const slash = parseSlash(text);
    if (!slash) return this.prompt(text, options);
    const command = this.#commands.get(slash.name);
    if (!command) {
      const known = [...this.#commands.keys()].map((n) => `/${n}`).join(", ");
      return Promise.reject(
        new ValidationError(`unknown command "/${slash.name}": available commands are ${known}`),
      );
    }
    const signal = this.#signal(options.signal);
    return command.run(slash.args, { session_id: this.sessionId, source: options.source, signal })
      .then((output) => this.#keepCommand(text, slash.name, output));
  }

  /**
   * A command's output is kept (docs/slash-commands.md): a `command` event, and in the transcript as the command line
   * (user) and its output (an assistant row named `command`): a user/assistant pair keeps the role order
   * every provider accepts. While a turn runs the rows wait for it to end (they cannot go between a tool call
   * and its result) and the caller does not wait for them, so `/status` still answers at once.
   */
  async #keepCommand(text: string, name: string, output: string): Promise<PromptResult> {
    this.#emit({ type: "command", name, output });
    const busy = this.#busy;
    const kept = this.#queue.then(async () => {
      await this.#transcript.closeDanglingToolCalls();
      await this.#transcript.append([
        { role: "user", content: text },
        { role: "assistant", content: output, name: "command" },
      ]);
    });
    this.#queue = kept.catch((error) =>
      this.#o.log.warn(`cannot store /${name}'s output: ${errorMessage(error)}`)
    );
    if (!busy) await kept;
    return { final: output, model_calls: 0 };
  }

  prompt(text: string, options: PromptOptions): Promise<PromptResult> {
    const run = this.#queue.then(() => this.#runTurn(text, options));
    this.#queue = run.catch(() => {});
    return run;
  }

  #signal(extra?: AbortSignal): AbortSignal {
    const signals = [this.#o.signal, extra].filter((s): s is AbortSignal => s !== undefined);
    return signals.length === 1 ? signals[0]! : AbortSignal.any(signals);
  }

  #emit(event: EventInput): void {
    this.#o.events.emit(this.sessionId, event);
  }

  async #runTurn(text: string, options: PromptOptions): Promise<PromptResult> {
    const { store, hooks, budget } = this.#o;
    const signal = this.#signal(options.signal);
    signal.throwIfAborted();
    this.#busy = true;
    // Outside any prompt (a loop tick driven in the background of a served session) this turn is its own
    // prompt for the limits; inside one (runTurn) it counts with it.
    const endBudget = budget.begin();
    let modelCalls = 0;
    try {
      // Finish the calls of resumable tools a killed run left open, close the others, before anything
      // follows them.
      await this.#finishOpenCalls(signal);
      const user = { role: "user" as const, content: text };
      const sent = options.step === undefined
        ? (await this.#transcript.append([user]), true)
        : await this.#transcript.sendStep(options.step, user);
      if (sent) {
        this.#emit({ type: "message", role: "user", content: text, source: options.source });
      } else {
        // A killed run sent this step: nothing is sent twice. An answer stored after it is the result; else
        // the model continues from the transcript.
        const last = (await this.#transcript.active()).at(-1);
        if (last?.role === "assistant" && !last.tool_calls?.length) {
          return { final: last.content, model_calls: 0 };
        }
      }
      while (true) {
        signal.throwIfAborted();
        budget.beforeModelCall();
        await this.#askServerWindow(signal);
        const compacted = await this.#o.compactor?.beforeModelCall(this.sessionId, {
          signal,
          afterTools: modelCalls > 0,
          overheadTokens: this.#overheadTokens,
        });
        const step = ++this.#step;
        const injected =
          (await hooks.preLlmCall({ session_id: this.sessionId, user_message: text, turn: step }))
            .filter((s) => s.trim() !== "");
        this.#emit({ type: "turn.start", turn: step, ...(injected.length ? { injected } : {}) });
        const { response, sent, viewed } = await this.#complete(injected, signal, compacted?.view).catch(
          (error) => {
            // Every turn.start has its turn.end, also when the model call fails or is stopped.
            const finish_reason = signal.aborted
              ? "aborted"
              : error instanceof LimitError
              ? error.limit
              : "error";
            this.#emit({ type: "turn.end", turn: step, usage: null, cost_usd: null, finish_reason });
            throw error;
          },
        );
        modelCalls++;
        const usage = response.usage && fullUsage(response.usage);
        const cost = usage && this.#o.price ? roundUsd(costOf(usage, this.#o.price)) : null;
        budget.record(response.usage, cost);
        // Recorded per call, at once: a run killed later still counts what it spent.
        await store.addUsage(this.sessionId, {
          turns: 1,
          ...(usage ?? { prompt_tokens: 0, completion_tokens: 0 }),
          cost_usd: usage ? cost : null,
          ...this.#answeredBy(),
        });
        const truncated = truncatedTo(sent, response.usage, this.#tokenRatio.value);
        if (truncated === null) this.#tokenRatio.observe(sent, response.usage);
        else {
          this.#useWindow(
            truncated,
            `the server counted ${truncated} prompt tokens for a request of about ${sent}: it truncated the ` +
              `prompt to its own context`,
            "warn",
          );
        }
        const assistant: AppendMessage = {
          ...response.message,
          // A truncated count measured a prompt the server did not read, a count of compaction's uncommitted
          // view a prompt that is not the stored transcript: neither may calibrate estimates.
          prompt_tokens: truncated === null && !viewed ? response.usage?.prompt_tokens ?? null : null,
          completion_tokens: response.usage?.completion_tokens ?? null,
        };
        await this.#transcript.append([assistant]);
        const calls = response.message.tool_calls ?? [];
        this.#emit({
          type: "message",
          role: "assistant",
          content: response.message.content,
          ...(calls.length ? { tool_calls: calls } : {}),
        });
        await hooks.postLlmCall({
          session_id: this.sessionId,
          assistant_message: {
            content: response.message.content,
            ...(calls.length ? { tool_calls: calls } : {}),
          },
          turn: step,
        });
        this.#emit({
          type: "turn.end",
          turn: step,
          usage,
          cost_usd: cost,
          finish_reason: response.finish_reason,
        });
        if (calls.length === 0) {
          await this.#afterTurn(signal);
          return { final: response.message.content, model_calls: modelCalls };
        }
        await this.#runTools(calls, signal);
      }
    } finally {
      this.#busy = false;
      endBudget();
    }
  }

  /** Micro-compaction and proactive pruning after a completed turn: a failure there never fails the turn. */
  async #afterTurn(signal: AbortSignal): Promise<void> {
    try {
      await this.#o.compactor?.afterTurn(this.sessionId, { signal });
    } catch (error) {
      if (!signal.aborted) this.#o.log.warn(`compaction between turns failed: ${errorMessage(error)}`);
    }
  }

  /** `view`: rows to send instead of the stored transcript (compaction's, while another process compacts). */
  async #complete(injected: string[], signal: AbortSignal, compactedView?: StoredMessage[]) {
    const onRetry = (info: RetryInfo) => this.#emit({ type: "provider.retry", ...info });
    let recovered = false;
    let view = compactedView;
    while (true) {
      const native = await this.#nativeSchema();
      const request: ModelRequest = {
        model: this.#o.model,
        messages: await this.#requestMessages(injected, view),
        tools: this.#toolSpecs,
        ...(this.#o.maxOutputTokens ? { max_tokens: this.#o.maxOutputTokens } : {}),
        ...(this.#o.temperature !== undefined ? { temperature: this.#o.temperature } : {}),
        ...(native ? { output_schema: native } : {}),
      };
      const sent = sentTokens(request.messages);
      const spend = new SpendCap(this.#o.budget, this.#o.price, sent + this.#overheadTokens);
      let recorded = false;
      try {
        const response = await this.#o.provider.complete(request, {
          signal: spend.signal(signal),
          onRetry,
          ...(this.#o.onDelta ? { onDelta: this.#o.onDelta } : {}),
          ...(spend.capped ? { onOutput: spend.onOutput } : {}),
        });
        // A provider that does not stream hands the whole reply over at once: over the cap is still over, and
        // it cost what the server reported for it.
        try {
          spend.check();
        } catch (error) {
          recorded = true;
          await this.#recordStopped(spend, response.usage);
          throw error;
        }
        return { response, sent, viewed: view !== undefined };
      } catch (error) {
        if (spend.stopped(error) && !recorded) await this.#recordStopped(spend);
        if (error instanceof ProviderError && error.contextOverflow && !recovered && this.#o.compactor) {
          recovered = true;
          if (error.contextLimit !== null) {
            this.#useWindow(
              error.contextLimit,
              `the server rejected the prompt: its context is ${error.contextLimit} tokens`,
            );
          }
          const options = { signal, overheadTokens: this.#overheadTokens };
          const recovery = await this.#o.compactor.recoverOverflow(this.sessionId, options);
          if (recovery.shrank) {
            view = recovery.view;
            continue;
          }
        }
        if (native && this.#refusedNative(error)) {
          await this.#rememberRefusal(error as ProviderError);
          continue;
        }
        throw error;
      }
    }
  }

  /**
   * A reply stopped by the cost cap was partly generated and is billed: the usage the server reported for it
   * when it arrived whole, else its estimated tokens and cost (the server never reported them), are recorded
   * so the session's and the job's spend do not miss it.
   */
  async #recordStopped(spend: SpendCap, reported?: Usage | null): Promise<void> {
    const usage = reported
      ? fullUsage(reported)
      : { prompt_tokens: spend.inputTokens, completion_tokens: spend.outputTokens };
    const cost = roundUsd(reported && this.#o.price ? costOf(usage, this.#o.price) : spend.estimate());
    this.#o.budget.record(usage, cost);
    this.#o.log.info(
      reported
        ? `the reply went past the cost cap; it cost ${formatUsd(cost)}`
        : `the reply was stopped at about ${spend.outputTokens} output tokens; its cost is estimated at ${
          formatUsd(cost)
        }`,
    );
    await this.#o.store.addUsage(this.sessionId, {
      turns: 1,
      ...usage,
      cost_usd: cost,
      ...this.#answeredBy(),
    });
  }

  /** The provider and model a model call is recorded under (`hermes cost --by model`). */
  #answeredBy(): { provider: string; model: string } {
    return { provider: this.#o.provider.name, model: this.#o.model };
  }

  /** `output.schema` for the request when it goes natively: not in prompt mode, not once the server refused. */
  async #nativeSchema(): Promise<OutputSchema | undefined> {
    const { outputSchema, structuredOutput = "auto" } = this.#o;
    if (!outputSchema || structuredOutput === "prompt") return undefined;
    if (this.#native === undefined) {
      this.#native = structuredOutput === "native" ||
        (await this.#o.store.getState(this.sessionId, NATIVE_REFUSED)) === undefined;
    }
    return this.#native ? outputSchema : undefined;
  }

  /** A server that does not take `response_format` json_schema answers 400 (auto mode falls back, once). */
  #refusedNative(error: unknown): boolean {
    return (this.#o.structuredOutput ?? "auto") === "auto" && error instanceof ProviderError &&
      error.status === 400 && !error.contextOverflow;
  }

  async #rememberRefusal(error: ProviderError): Promise<void> {
    this.#native = false;
    this.#o.log.warn(
      `the server refused output.schema as response_format (${error.message}); asking for it in the prompt ` +
        "and validating the answer instead, for the rest of this session",
    );
    await this.#o.store.setState(this.sessionId, NATIVE_REFUSED, {
      at: this.#o.clock.now(),
      error: error.message,
    });
  }

  /**
   * Applies the window the provider's server runs (local llama.cpp, Ollama) before the session's first
   * compaction check: the probe started when the session opened, else asked now. A step stopped while it
   * waits leaves the probe's answer to the next one.
   */
  async #askServerWindow(signal: AbortSignal): Promise<void> {
    if (this.#windowKnown || !this.#o.compactor) return;
    this.#serverWindow ??= (this.#o.serverWindow ?? this.#o.provider.serverWindow?.({ signal }))
      ?.catch(() => null);
    if (!this.#serverWindow) {
      this.#windowKnown = true;
      return;
    }
    const window = await settledOrAborted(this.#serverWindow, signal);
    signal.throwIfAborted();
    this.#windowKnown = true;
    if (window) {
      this.#useWindow(window.tokens, `the server runs a ${window.tokens}-token context (${window.source})`);
    }
  }

  /** Compaction counts against `tokens` from now on, when that is smaller than its window; says so once. */
  #useWindow(tokens: number, why: string, level: "info" | "warn" = "info"): void {
    const previous = this.#o.compactor?.useWindow(tokens);
    if (previous === null || previous === undefined) return;
    this.#o.log[level](
      `${why}, less than the ${previous} tokens compaction counted with: compacting to ${tokens}`,
    );
  }

  /** The active transcript as the model sees it, with hook text appended to the last user message. */
  async #requestMessages(injected: string[], view?: StoredMessage[]): Promise<Message[]> {
    const messages = view ? this.#transcript.viewForModel(view) : await this.#transcript.forModel();
    if (injected.length) {
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i]!;
        if (m.role === "user") {
          messages[i] = { ...m, content: `${m.content}\n\n${injected.join("\n\n")}` };
          break;
        }
      }
    }
    return messages;
  }

  /**
   * Runs one step's calls in the model's order; a run of consecutive calls of a concurrent tool (delegate)
   * runs at once, each result stored in call order once the ones before it are stored.
   */
  async #runTools(calls: readonly ToolCall[], signal: AbortSignal, resumed = false): Promise<void> {
    const concurrent = (call: ToolCall) =>
      this.#o.tools.find((tool) => tool.spec.name === call.name)?.concurrent === true;
    for (let i = 0; i < calls.length;) {
      let end = i + 1;
      if (concurrent(calls[i]!)) { while (end < calls.length && concurrent(calls[end]!)) end++; }
      const group = calls.slice(i, end);
      i = end;
      if (group.length === 1) {
        await this.#runTool(group[0]!, signal, undefined, resumed);
        continue;
      }
      let stored: Promise<unknown> = Promise.resolve();
      const settled = await Promise.allSettled(group.map((call) => {
        const before = stored;
        let release!: () => void;
        stored = new Promise<void>((resolve) => release = resolve);
        return this.#runTool(call, signal, { before, stored: release }, resumed).finally(release);
      }));
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
      if (failed) throw failed.reason;
    }
  }

  /**
   * Runs again the calls of resumable tools (delegate) that have no result, then closes the other calls
   * without one: a killed run left them open. One read of the transcript when none is resumable.
   */
  async #finishOpenCalls(signal: AbortSignal): Promise<void> {
    const messages = await this.#transcript.active();
    const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
    const resumable = (call: ToolCall) =>
      this.#o.tools.find((tool) => tool.spec.name === call.name)?.resumable === true;
    const open = messages.flatMap((m) => m.tool_calls ?? []).filter((call) =>
      !answered.has(call.id) && resumable(call)
    );
    if (open.length === 0) return await this.#transcript.closeDanglingToolCalls(messages);
    await this.#runTools(open, signal, true);
    await this.#transcript.closeDanglingToolCalls();
  }

  async #runTool(
    call: ToolCall,
    signal: AbortSignal,
    order?: { before: Promise<unknown>; stored: () => void },
    resumed = false,
  ): Promise<void> {
    await this.#gate.call(call, {
      ...this.#o.toolContext,
      session_id: this.sessionId,
      signal,
      ...(resumed ? { resumed } : {}),
      keep: async (outcome, { tool, args }) => {
        // Stored after the results of the calls the model made before this one.
        await order?.before;
        const result: AppendMessage = {
          role: "tool",
          tool_call_id: call.id,
          name: call.name,
          content: outcome.content,
        };
        // A result too large for the window is stored cut, its full text archived.
        let stored = await this.#o.compactor?.fitToolResult(this.sessionId, result) ?? [result];
        if (call.name === "read_file" && tool && !tool.server && outcome.status === "ok") {
          const note = await this.#repeatedRead(args, stored.find((m) => m.active !== false)?.content);
          if (note !== null) {
            outcome = { status: "ok", content: note };
            stored = [{ ...result, content: note }];
          }
        }
        // Within what the session may still store; the text cut is the whole result, or the note standing for it.
        const storedOutput = this.#storedOutputFor();
        if (storedOutput) {
          stored = await (await storedOutput).fit(stored.length === 1 ? stored[0]! : result, stored);
        }
        await this.#transcript.append(stored);
        order?.stored();
        return outcome;
      },
    });
  }

  /** The session's ceiling on stored tool results, or undefined when it has none. */
  #storedOutputFor(): Promise<StoredOutput> | undefined {
    const ceiling = this.#o.maxSessionOutput;
    if (ceiling === undefined) return undefined;
    // Loaded with the first result kept: before the first model request there is none.
    return this.#storedOutput ??= import("./stored_output.ts").then(({ StoredOutput }) =>
      new StoredOutput({ store: this.#o.store, sessionId: this.sessionId, ceiling })
    );
  }

  /** The note that stands for a repeated read of an unchanged file still in the transcript, or null. */
  async #repeatedRead(args: Record<string, unknown>, content: string | undefined): Promise<string | null> {
    if (!(this.#o.readDedup ?? true) || content === undefined) return null;
    // Loaded with the first read_file result: before the first model request there is none.
    const { readKey, unchangedNote, unchangedRead } = await import("./read_dedup.ts");
    const jobDir = this.#o.toolContext.job_dir;
    const key = readKey(args, jobDir);
    if (key === null) return null;
    const earlier = unchangedRead(await this.#transcript.active(), key, content, jobDir);
    return earlier ? unchangedNote(String(args.path), earlier) : null;
  }

  async #status(): Promise<string> {
    const session = await this.#o.store.getSession(this.sessionId);
    const active = (await this.#transcript.active()).length;
    const occupancy = await this.#o.compactor?.occupancy(this.sessionId);
    const { budget } = this.#o;
    return [
      `session ${this.sessionId} (${session?.job ?? "?"})`,
      `model: ${this.#o.model}`,
      `messages: ${active} active`,
      ...(occupancy
        ? [
          `context: ~${occupancy.tokens} tokens, ${
            Math.round(occupancy.occupancy * 100)
          }% of the compaction threshold (${occupancy.threshold_tokens} of a ${occupancy.window_tokens}-token window)`,
        ]
        : []),
      `turns this run: ${budget.turns}${budget.maxTurns ? ` / ${budget.maxTurns}` : ""}`,
      `tokens this run: ${budget.tokens}${budget.maxTokens ? ` / ${budget.maxTokens}` : ""}`,
      `tools: ${this.#gate.offered.map((t) => t.spec.name).join(", ") || "none"}`,
    ].join("\n");
  }
}

/** The session's record that its server refused `response_format` json_schema: later requests go without. */
const NATIVE_REFUSED = "structured_output.native_refused";

/** `promise`'s value, or null as soon as `signal` aborts (the promise goes on, for a later step). */
function settledOrAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  const { promise: aborted, resolve } = Promise.withResolvers<null>();
  const onAbort = () => resolve(null);
  signal.addEventListener("abort", onAbort, { once: true });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/** A provider's usage with every count present (0 where it reported none), as events and results carry it. */
function fullUsage(usage: Usage): Required<Usage> {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_tokens: usage.cached_tokens ?? 0,
    cache_write_tokens: usage.cache_write_tokens ?? 0,
    reasoning_tokens: usage.reasoning_tokens ?? 0,
  };
}
