import assert from "node:assert/strict";
import { RunError, ValidationError } from "../core/errors.ts";
import { LimitError } from "../agent/limits.ts";
import {
  buildResult,
  type Ending,
  endingOfAnswer,
  endingOfError,
  failedDelivery,
  NO_USAGE,
} from "./outcome.ts";

const idle = () => new AbortController().signal;
const aborted = (reason?: unknown) => AbortSignal.abort(reason);
const abortError = new DOMException("aborted", "AbortError");

Deno.test("endingOfError: a thrown limit, or the timeout's reason, is a limit (exit 3)", () => {
  const thrown = endingOfError({
    caught: new LimitError("max_turns", "Stopped after 1 turns"),
    timeout: idle(),
  });
  assert.deepEqual(thrown, {
    status: "limit",
    terminal_reason: "max_turns",
    exit_code: 3,
    error: "Stopped after 1 turns",
  });
  const timedOut = endingOfError({
    caught: abortError,
    timeout: aborted(new LimitError("timeout", "Stopped after 1s")),
    cancel: aborted(),
  });
  assert.deepEqual(timedOut, {
    status: "limit",
    terminal_reason: "timeout",
    exit_code: 3,
    error: "Stopped after 1s",
  });
});

Deno.test("endingOfError: a cancel is interrupted/cancelled (130), ahead of an interrupt", () => {
  const ending = endingOfError({
    caught: abortError,
    timeout: idle(),
    cancel: aborted(),
    interrupt: aborted(),
  });
  assert.deepEqual(ending, {
    status: "interrupted",
    terminal_reason: "cancelled",
    exit_code: 130,
    error: "The turn was cancelled",
  });
  // A cancel signal that did not fire does not make a failure a cancel.
  assert.equal(
    endingOfError({ caught: new Error("boom"), timeout: idle(), cancel: idle() }).status,
    "failed",
  );
});

Deno.test("endingOfError: an interrupt takes its exit code when it happened and names what stopped", () => {
  const sigterm = endingOfError({
    caught: abortError,
    timeout: idle(),
    interrupt: aborted(),
    interruptExitCode: () => 143,
  });
  assert.deepEqual(sigterm, {
    status: "interrupted",
    terminal_reason: "interrupted",
    exit_code: 143,
    error: "The run was interrupted",
  });
  const server = endingOfError({
    caught: abortError,
    timeout: idle(),
    interrupt: aborted(),
    interrupted: "server",
  });
  assert.equal(server.exit_code, 130);
  assert.equal(server.error, "The server was interrupted");
  assert.equal(
    endingOfError({ caught: abortError, timeout: idle(), interrupt: idle() }).terminal_reason,
    "error",
  );
});

Deno.test("endingOfError: invalid input keeps its exit code; a RunError its reason; anything else is error", () => {
  assert.deepEqual(
    endingOfError({ caught: new ValidationError('unknown command "/nope"'), timeout: idle() }),
    {
      status: "failed",
      terminal_reason: "invalid_input",
      exit_code: 2,
      error: 'unknown command "/nope"',
    },
  );
  assert.deepEqual(
    endingOfError({ caught: new RunError("HTTP 500", { reason: "provider_error" }), timeout: idle() }),
    { status: "failed", terminal_reason: "provider_error", exit_code: 1, error: "HTTP 500" },
  );
  assert.deepEqual(endingOfError({ caught: "a string", timeout: idle() }), {
    status: "failed",
    terminal_reason: "error",
    exit_code: 1,
    error: "a string",
  });
});

Deno.test("endingOfAnswer: success, loop reasons, schema mismatch before empty answer", () => {
  assert.deepEqual(endingOfAnswer({ final: "done" }), {
    status: "success",
    terminal_reason: "completed",
    exit_code: 0,
    error: null,
  });
  assert.equal(endingOfAnswer({ final: "tick", reason: "loop_done" }).terminal_reason, "loop_done");
  assert.deepEqual(
    endingOfAnswer({ final: '{"a":1}', schema: { ok: true, value: { a: 1 } } }).status,
    "success",
  );
  assert.deepEqual(endingOfAnswer({ final: "", schema: { ok: false, error: "the answer is not JSON" } }), {
    status: "failed",
    terminal_reason: "schema_mismatch",
    exit_code: 1,
    error: "The final answer does not match output.schema: the answer is not JSON",
  });
  assert.deepEqual(endingOfAnswer({ final: " \n" }), {
    status: "failed",
    terminal_reason: "empty_response",
    exit_code: 1,
    error: "The model's final answer was empty",
  });
});

Deno.test("buildResult: the result object in its printed key order, usage and duration as differences", () => {
  const ending: Ending = { status: "success", terminal_reason: "completed", exit_code: 0, error: null };
  const result = buildResult(ending, {
    session_id: "s1",
    job: "demo",
    labels: {},
    final: '{"a":1}',
    output: { a: 1 },
    turns: 2,
    before: {
      ...NO_USAGE,
      prompt_tokens: 100,
      completion_tokens: 10,
      cached_tokens: 60,
      cache_write_tokens: 5,
      reasoning_tokens: 2,
      cost_usd: 0.1,
    },
    after: {
      ...NO_USAGE,
      prompt_tokens: 130,
      completion_tokens: 14,
      cached_tokens: 85,
      cache_write_tokens: 9,
      reasoning_tokens: 3,
      cost_usd: 0.3,
    },
    started: 1_000,
    ended: 1_250,
    compactions: 1,
  });
  assert.equal(
    JSON.stringify(result),
    JSON.stringify({
      type: "result",
      schema_version: 1,
      status: "success",
      exit_code: 0,
      session_id: "s1",
      job: "demo",
      labels: {},
      final: '{"a":1}',
      output: { a: 1 },
      turns: 2,
      usage: {
        prompt_tokens: 30,
        completion_tokens: 4,
        cached_tokens: 25,
        cache_write_tokens: 4,
        reasoning_tokens: 1,
      },
      // 0.3 - 0.1 is 0.19999999999999998 in floating point: the result reports dollars without that noise.
      cost_usd: 0.2,
      duration_ms: 250,
      compactions: 1,
      terminal_reason: "completed",
      error: null,
    }),
  );
});

Deno.test("buildResult: cost_usd is null when any model call of the work had no known price", () => {
  const ending: Ending = { status: "success", terminal_reason: "completed", exit_code: 0, error: null };
  const facts = {
    session_id: "s1",
    job: "demo",
    labels: {},
    final: "x",
    output: null,
    turns: 2,
    started: 0,
    ended: 1,
    compactions: 0,
  };
  const priced = buildResult(ending, { ...facts, before: NO_USAGE, after: { ...NO_USAGE, cost_usd: 0.5 } });
  assert.equal(priced.cost_usd, 0.5);
  const unpriced = buildResult(ending, {
    ...facts,
    before: { ...NO_USAGE, unpriced_calls: 1 },
    after: { ...NO_USAGE, cost_usd: 0.5, unpriced_calls: 2 },
  });
  assert.equal(unpriced.cost_usd, null);
  // Unpriced calls of an earlier run of the session do not make this run's cost unknown.
  const later = buildResult(ending, {
    ...facts,
    before: { ...NO_USAGE, unpriced_calls: 1 },
    after: { ...NO_USAGE, cost_usd: 0.5, unpriced_calls: 1 },
  });
  assert.equal(later.cost_usd, 0.5);
});

Deno.test("endingOfAnswer: an answer the provider cut fails (exit 1), whatever its text; stop succeeds", () => {
  const cut = endingOfAnswer({ final: "half an ans", finish_reason: "length" });
  assert.deepEqual([cut.status, cut.terminal_reason, cut.exit_code], ["failed", "output_truncated", 1]);
  const filtered = endingOfAnswer({ final: "", finish_reason: "content_filter" });
  assert.deepEqual([filtered.status, filtered.terminal_reason], ["failed", "content_filtered"]);
  assert.equal(endingOfAnswer({ final: "whole", finish_reason: "stop" }).status, "success");
  assert.equal(endingOfAnswer({ final: "a command's output" }).status, "success");
  assert.equal(endingOfAnswer({ final: "x", finish_reason: "constructor" }).status, "success");
});

Deno.test("failedDelivery: a success whose report could not be delivered fails; a failure keeps its ending", () => {
  const ok = buildResult(endingOfAnswer({ final: "fine" }), {
    session_id: "s",
    job: "j",
    labels: {},
    final: "fine",
    output: null,
    turns: 1,
    before: NO_USAGE,
    after: NO_USAGE,
    started: 0,
    ended: 1,
    compactions: 0,
  });
  const failed = failedDelivery(ok, { terminal_reason: "ci_output_error", error: "cannot write" });
  assert.deepEqual([failed.status, failed.exit_code, failed.terminal_reason, failed.error], [
    "failed",
    1,
    "ci_output_error",
    "cannot write",
  ]);
  const limited = { ...ok, status: "limit" as const, exit_code: 3, terminal_reason: "max_turns" };
  assert.equal(failedDelivery(limited, { terminal_reason: "x", error: "y" }), limited);
});
