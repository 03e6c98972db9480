/**
 * A case's `expect:` against what its run did: each failed expectation says what was expected, what
 * happened, and where in the run (the step — the model call — and the event's `seq`), with the key path in
 * the case file so a report can point at its line.
 */
import type { HermesEvent } from "../../runtime/core/events.ts";
import type { RunResult } from "../../runtime/session/outcome.ts";
import { resolve } from "../../runtime/core/path.ts";
import type { ExpectSpec, ToolMatchSpec } from "./case_file.ts";

export interface Failure {
  /** The key path in the case file (`["expect", "tools_not_called", 0]`). */
  path: (string | number)[];
  expected: string;
  actual: string;
  /** Where in the run: `step 2, event 14 (tool.call)`, `result.final`, a file. */
  where: string;
}

export interface RunRecord {
  result: RunResult;
  events: readonly HermesEvent[];
  /** The case's copy of the job's folder, where `files:` are looked up. */
  workDir: string;
}

interface Call {
  tool: string;
  args: Record<string, unknown>;
  step: number;
  seq: number;
}

export async function checkExpectations(expect: ExpectSpec, run: RunRecord): Promise<Failure[]> {
  const failures: Failure[] = [];
  const { result } = run;
  const fail = (path: (string | number)[], expected: string, actual: string, where: string) =>
    failures.push({ path: ["expect", ...path], expected, actual, where });
  const resultWhere = `result (${result.status}, ${result.terminal_reason}${
    result.error ? `: ${result.error}` : ""
  })`;
  // A case that says nothing about how the run ends expects it to succeed.
  const ending = expect.status ??
    (expect.exit_code === undefined && expect.terminal_reason === undefined ? "success" : undefined);
  if (ending !== undefined && result.status !== ending) {
    fail(["status"], ending, result.status, resultWhere);
  }
  if (expect.exit_code !== undefined && result.exit_code !== expect.exit_code) {
    fail(["exit_code"], String(expect.exit_code), String(result.exit_code), resultWhere);
  }
  if (expect.terminal_reason !== undefined && result.terminal_reason !== expect.terminal_reason) {
    fail(["terminal_reason"], expect.terminal_reason, result.terminal_reason, resultWhere);
  }
  if (expect.output !== undefined) {
    if ("schema" in expect.output) {
      const { compileJsonSchema } = await import("../../runtime/config/json_schema.ts");
      const problem = result.output === null
        ? "no structured output (output is null)"
        : compileJsonSchema(expect.output.schema)(result.output);
      if (problem !== null) {
        fail(
          ["output", "schema"],
          "output meeting the schema",
          `${problem}: ${show(result.output)}`,
          "result.output",
        );
      }
    } else {
      const problem = partialMismatch(expect.output.match, result.output, "output");
      if (problem !== null) fail(["output", "match"], show(expect.output.match), problem, "result.output");
    }
  }
  list(expect.final_contains).forEach((text, i, all) => {
    if (!result.final.includes(text)) {
      fail(
        ["final_contains", ...(all.length > 1 ? [i] : [])],
        `final containing ${show(text)}`,
        show(result.final),
        "result.final",
      );
    }
  });
  list(expect.final_matches).forEach((pattern, i, all) => {
    if (!new RegExp(pattern).test(result.final)) {
      fail(
        ["final_matches", ...(all.length > 1 ? [i] : [])],
        `final matching /${pattern}/`,
        show(result.final),
        "result.final",
      );
    }
  });
  const calls = toolCalls(run.events);
  const called = expect.tools_called === undefined
    ? undefined
    : Array.isArray(expect.tools_called)
    ? { calls: expect.tools_called, ordered: false, key: [] as (string | number)[] }
    : { calls: expect.tools_called.calls, ordered: expect.tools_called.ordered ?? false, key: ["calls"] };
  if (called) {
    let from = 0;
    called.calls.forEach((want, i) => {
      const pool = called.ordered ? calls.slice(from) : calls;
      const at = pool.findIndex((call) => matches(want, call));
      if (at < 0) {
        const after = called.ordered && from > 0 ? ` after step ${calls[from - 1]!.step}` : "";
        fail(
          ["tools_called", ...called.key, i],
          `a call of ${describe(want)}${after}`,
          calls.length ? calls.map(showCall).join("; ") : "no tool calls",
          "the run's tool.call events",
        );
      } else if (called.ordered) from += at + 1;
    });
  }
  (expect.tools_not_called ?? []).forEach((unwanted, i) => {
    const call = calls.find((c) => matches(unwanted, c));
    if (call) {
      fail(
        ["tools_not_called", i],
        `no call of ${describe(unwanted)}`,
        showCall(call),
        `step ${call.step}, event ${call.seq} (tool.call)`,
      );
    }
  });
  if (expect.max_steps !== undefined && result.turns > expect.max_steps) {
    fail(["max_steps"], `at most ${expect.max_steps} steps (model calls)`, `${result.turns}`, "result.turns");
  }
  const tokens = result.usage.prompt_tokens + result.usage.completion_tokens;
  if (expect.max_tokens !== undefined && tokens > expect.max_tokens) {
    fail(["max_tokens"], `at most ${expect.max_tokens} tokens`, `${tokens}`, "result.usage");
  }
  if (expect.max_cost_usd !== undefined) {
    if (result.cost_usd === null) {
      fail(
        ["max_cost_usd"],
        `at most $${expect.max_cost_usd}`,
        "unknown (the model has no known price)",
        "result.cost_usd",
      );
    } else if (result.cost_usd > expect.max_cost_usd) {
      fail(["max_cost_usd"], `at most $${expect.max_cost_usd}`, `$${result.cost_usd}`, "result.cost_usd");
    }
  }
  for (const [path, want] of Object.entries(expect.files ?? {})) {
    const text = await readOrNull(resolve(run.workDir, path));
    const where = `file ${path} in the job's folder`;
    if (want.exists !== undefined && (text !== null) !== want.exists) {
      fail(
        ["files", path, "exists"],
        want.exists ? "the file exists" : "no such file",
        text !== null ? "it exists" : "no such file",
        where,
      );
      continue;
    }
    if (
      want.exists === undefined && text === null &&
      (want.contains !== undefined || want.matches !== undefined)
    ) {
      fail(["files", path], "the file exists", "no such file", where);
      continue;
    }
    if (text === null) continue;
    for (const piece of list(want.contains)) {
      if (!text.includes(piece)) {
        fail(["files", path, "contains"], `containing ${show(piece)}`, show(text), where);
      }
    }
    for (const pattern of list(want.matches)) {
      if (!new RegExp(pattern).test(text)) {
        fail(["files", path, "matches"], `matching /${pattern}/`, show(text), where);
      }
    }
  }
  return failures;
}

/** Every tool call the model made, with the step (model call) it came from and its event's seq. */
function toolCalls(events: readonly HermesEvent[]): Call[] {
  const calls: Call[] = [];
  let step = 0;
  for (const event of events) {
    if (event.type === "turn.start") step = event.turn;
    if (event.type === "tool.call") calls.push({ tool: event.tool, args: event.args, step, seq: event.seq });
  }
  return calls;
}

function matches(want: ToolMatchSpec, call: Call): boolean {
  if (typeof want === "string") return call.tool === want;
  if (call.tool !== want.tool) return false;
  return Object.entries(want.args ?? {}).every(([name, pattern]) => {
    const value = call.args[name];
    if (typeof pattern === "string") {
      return value !== undefined &&
        new RegExp(pattern).test(typeof value === "string" ? value : JSON.stringify(value));
    }
    return JSON.stringify(value) === JSON.stringify(pattern);
  });
}

/** Why `actual` does not contain `want` (objects: its keys, recursively; arrays and scalars: equal). */
function partialMismatch(want: unknown, actual: unknown, path: string): string | null {
  if (want !== null && typeof want === "object" && !Array.isArray(want)) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) {
      return `${path} is ${show(actual)}, not an object`;
    }
    for (const [key, value] of Object.entries(want)) {
      const problem = partialMismatch(value, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (problem !== null) return problem;
    }
    return null;
  }
  return JSON.stringify(want) === JSON.stringify(actual) ? null : `${path} is ${show(actual)}`;
}

function describe(want: ToolMatchSpec): string {
  return typeof want === "string"
    ? want
    : `${want.tool}${want.args ? ` with ${JSON.stringify(want.args)}` : ""}`;
}

function showCall(call: Call): string {
  return `${call.tool} ${JSON.stringify(call.args)} (step ${call.step})`;
}

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}
