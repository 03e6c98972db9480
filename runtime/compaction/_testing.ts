/** Test fixtures for compaction: a real store in a temp dir, a recording event bus and hooks, a scripted model. */
import type { Clock } from "../core/clock.ts";
import { EventBus, type HermesEvent } from "../core/events.ts";
import { type Hooks, noHooks, type PostCompactionPayload } from "../core/hooks.ts";
import { silentLogger } from "../core/log.ts";
import type { CompleteOptions, ModelRequest, ModelResponse, Provider } from "../providers/provider.ts";
import type { CompactionConfig } from "../config/job_schema.ts";
import type { Compactor } from "../agent/seams.ts";
import type { AppendMessage, Store } from "../store/store.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import { type CompactorOptions, createCompactor } from "./compactor.ts";

export const SHORT_SUMMARY = [
  "## Goal\nTriage the build.",
  "## Constraints\nnone",
  "## Progress\nRead the logs.",
  "## Decisions\nnone",
  "## Files and identifiers\nci.log",
  "## Next steps\nFix the test.",
].join("\n");

export interface Fixture extends AsyncDisposable {
  dir: string;
  path: string;
  store: Store;
  sessionId: string;
  events: HermesEvent[];
  bus: EventBus;
  postCompaction: PostCompactionPayload[];
  hooks: Hooks;
  clock: Clock;
}

export async function fixture(clock: Clock): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-compaction-" });
  const path = `${dir}/state.db`;
  const store = openSqliteStore(path, { clock });
  const sessionId = (await store.createSession({ job: "test" })).id;
  const bus = new EventBus(clock);
  const events: HermesEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const postCompaction: PostCompactionPayload[] = [];
  const hooks: Hooks = {
    ...noHooks,
    postCompaction: (payload) => {
      postCompaction.push(payload);
      return Promise.resolve();
    },
  };
  return {
    dir,
    path,
    store,
    sessionId,
    events,
    bus,
    postCompaction,
    hooks,
    clock,
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

export type Answer = (request: ModelRequest, options: CompleteOptions) => Promise<string> | string;

/** A scripted model: records every request and answers with `answer` (the model is all that is faked). */
export function scriptedModel(answer: Answer = () => SHORT_SUMMARY): Provider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    name: "scripted-test",
    requests,
    async complete(request: ModelRequest, options: CompleteOptions = {}): Promise<ModelResponse> {
      requests.push(request);
      const content = await answer(request, options);
      return {
        message: { role: "assistant", content },
        usage: { prompt_tokens: 1, completion_tokens: 1 },
        finish_reason: "stop",
      };
    },
  };
}

export function compactorFor(
  fx: Fixture,
  options:
    & { provider: Provider; context_window?: number; config?: CompactionConfig }
    & Partial<CompactorOptions>,
): Compactor {
  return createCompactor({
    store: fx.store,
    model: "main-model",
    context_window: 4000,
    config: {},
    events: fx.bus,
    hooks: fx.hooks,
    clock: fx.clock,
    log: silentLogger,
    ...options,
  });
}

export interface TranscriptOptions {
  /** Characters of each tool result. */
  toolChars?: number;
  /** Characters of each assistant answer. */
  textChars?: number;
}

/**
 * system, first prompt, then `rounds` × [assistant tool call, tool result, assistant answer, user follow-up].
 * No token readings: the estimate is chars/4.
 */
export function transcript(rounds: number, options: TranscriptOptions = {}): AppendMessage[] {
  const toolChars = options.toolChars ?? 400;
  const textChars = options.textChars ?? 200;
  const messages: AppendMessage[] = [
    { role: "system", content: "You are a careful release engineer." },
    { role: "user", content: "FIRST PROMPT: triage the nightly build" },
  ];
  for (let i = 1; i <= rounds; i++) {
    const id = `call_${i}`;
    messages.push(
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id, name: "shell", arguments: `{"command":"cat log${i}"}` }],
      },
      { role: "tool", tool_call_id: id, name: "shell", content: `log ${i} `.padEnd(toolChars, "x") },
      { role: "assistant", content: `answer ${i} `.padEnd(textChars, "y") },
      { role: "user", content: `follow-up ${i}` },
    );
  }
  return messages;
}

/** Why `messages` would be rejected by a Chat Completions endpoint: tool calls separated from their results. */
export function orphanProblems(
  messages: readonly { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[],
): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === "tool") {
      if (!m.tool_call_id || !open.has(m.tool_call_id)) {
        problems.push(`message ${i}: orphan tool result ${m.tool_call_id}`);
      }
      open.delete(m.tool_call_id ?? "");
      continue;
    }
    if (open.size) {
      problems.push(`message ${i}: tool calls ${[...open].join(", ")} have no results before it`);
    }
    open = new Set((m.tool_calls ?? []).map((c) => c.id));
  }
  if (open.size) problems.push(`end: tool calls ${[...open].join(", ")} have no results`);
  return problems;
}

/**
 * Why strict chat templates (llama.cpp, vLLM) would reject `messages`: two consecutive messages of one role,
 * tool results excepted.
 */
export function roleProblems(messages: readonly { role: string }[]): string[] {
  const problems: string[] = [];
  for (let i = 1; i < messages.length; i++) {
    const role = messages[i]!.role;
    if (role !== "tool" && role === messages[i - 1]!.role) {
      problems.push(`messages ${i - 1} and ${i}: ${role}, ${role}`);
    }
  }
  return problems;
}

/** Resolves with the first line a child process prints that satisfies `accept`. */
export async function waitForLine(
  lines: AsyncIterator<string>,
  accept: (line: string) => boolean,
): Promise<string> {
  while (true) {
    const next = await lines.next();
    if (next.done) throw new Error("the child process ended before printing the expected line");
    if (accept(next.value)) return next.value;
  }
}

/** Lines of a child's stdout. */
export async function* linesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
    }
  }
  if (buffer) yield buffer;
}

export const TESTDATA = new URL("./testdata/", import.meta.url).pathname;
/** A writer on the same store in another process: `append_messages.ts DB SESSION_ID COUNT [TAG]`. */
export const APPENDER = new URL("../store/sqlite/testdata/append_messages.ts", import.meta.url).pathname;
