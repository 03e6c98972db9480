/**
 * OpenTelemetry through the real CLI: `hermes run` with OTEL_EXPORTER_OTLP_ENDPOINT exports its spans and
 * metrics to a local OTLP/HTTP receiver before it exits, with the GenAI semantic conventions; prompt text and
 * tool arguments stay out unless content capture is on; telemetry off sends nothing.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ReceivedSpan, startOtlpReceiver } from "../_testing/otlp_receiver.ts";
import { RpcClient } from "../_testing/rpc_client.ts";

const SECRET_PROMPT = "Greet the-very-private-prompt-text and list the folder.";

async function job(): Promise<string> {
  return await writeFiles(await tempDir(), {
    "job.yaml": "name: greet\nmodel: { provider: scripted, script: ./r.yaml }\n" +
      `prompt: ${SECRET_PROMPT}\ntools:\n  list_dir: {}\n`,
    "r.yaml":
      '- tool_calls:\n    - name: list_dir\n      arguments: { path: "." }\n- content: Hello, done.\n',
  });
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const span = spans.find((s) => s.name === name);
  assert.ok(span, `a span named ${name} among ${spans.map((s) => s.name).join(", ")}`);
  return span;
}

Deno.test("telemetry: hermes run exports session, turn, model call and tool spans and token metrics before it exits", async () => {
  const receiver = startOtlpReceiver();
  try {
    const dir = await job();
    const run = await hermes(["run", `${dir}/job.yaml`, "--output", "json", "--label", "team=infra"], {
      home: `${dir}/home`,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=k%3D1,x-team=ci",
        OTEL_SERVICE_NAME: "hermes-ci",
      },
    });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    const { spans } = receiver;
    const session = byName(spans, "invoke_agent greet");
    assert.equal(session.parentSpanId, "");
    assert.equal(session.resource["service.name"], "hermes-ci");
    // The run's labels are resource attributes: a collector groups by them.
    assert.equal(session.resource["hermes.label.team"], "infra");
    assert.equal(session.attributes["gen_ai.operation.name"], "invoke_agent");
    assert.equal(session.attributes["gen_ai.conversation.id"], result.session_id);
    assert.equal(session.attributes["gen_ai.provider.name"], "scripted");
    assert.equal(session.attributes["hermes.exit_code"], 0);
    assert.equal(session.attributes["hermes.terminal_reason"], "completed");
    assert.equal(session.attributes["gen_ai.usage.input_tokens"], result.usage.prompt_tokens);
    const turn = byName(spans, "hermes.turn");
    assert.equal(turn.parentSpanId, session.spanId);
    const calls = spans.filter((s) => s.name === "chat scripted");
    assert.equal(calls.length, 2, "two model calls");
    for (const call of calls) {
      assert.equal(call.parentSpanId, turn.spanId);
      assert.equal(call.kind, 3, "SPAN_KIND_CLIENT");
      assert.equal(call.attributes["gen_ai.operation.name"], "chat");
      assert.equal(call.attributes["gen_ai.request.model"], "scripted");
    }
    assert.equal(
      calls.reduce((sum, c) => sum + (c.attributes["gen_ai.usage.input_tokens"] as number), 0),
      result.usage.prompt_tokens,
    );
    assert.deepEqual(calls.map((c) => c.attributes["gen_ai.response.finish_reasons"]), [["tool_calls"], [
      "stop",
    ]]);
    const tool = byName(spans, "execute_tool list_dir");
    assert.equal(tool.parentSpanId, turn.spanId);
    assert.equal(tool.attributes["gen_ai.tool.name"], "list_dir");
    assert.equal(tool.attributes["hermes.tool.status"], "ok");
    assert.ok(new Set(spans.map((s) => s.traceId)).size === 1, "one trace per session");
    for (const span of spans) assert.ok(span.endMs >= span.startMs, `${span.name} ends after it starts`);
    // Metrics: input and output tokens per model call, summed to the run's totals.
    const tokens = (type: string) =>
      receiver.points.filter((p) =>
        p.metric === "gen_ai.client.token.usage" && p.attributes["gen_ai.token.type"] === type
      ).reduce((sum, p) => sum + p.value, 0);
    assert.equal(tokens("input"), result.usage.prompt_tokens);
    assert.equal(tokens("output"), result.usage.completion_tokens);
    assert.ok(receiver.points.some((p) => p.metric === "gen_ai.client.operation.duration"));
    assert.ok(receiver.points.some((p) => p.metric === "hermes.tool.duration"));
    // Headers from OTEL_EXPORTER_OTLP_HEADERS, URL-decoded; no prompt text anywhere by default.
    assert.ok(receiver.headers.every((h) => h.get("x-collector-key") === "k=1" && h.get("x-team") === "ci"));
    assert.ok(receiver.bodies.every((b) => !b.includes("the-very-private-prompt-text")));
    assert.ok(receiver.bodies.every((b) => !b.includes("Hello, done.")), "nor the answer");
  } finally {
    await receiver.close();
  }
});

Deno.test("telemetry: capture_content in config.yaml puts the prompt, the answer and tool arguments on spans", async () => {
  const receiver = startOtlpReceiver();
  try {
    const dir = await job();
    await writeFiles(dir, {
      "home/config.yaml": `telemetry:\n  endpoint: ${receiver.url}\n  capture_content: true\n` +
        "  headers: { x-from-config: yes }\n",
    });
    const run = await hermes(["run", `${dir}/job.yaml`], { home: `${dir}/home` });
    assert.equal(run.code, 0, run.stderr);
    const turn = byName(receiver.spans, "hermes.turn");
    assert.equal(turn.attributes["gen_ai.input.messages"], SECRET_PROMPT);
    const tool = byName(receiver.spans, "execute_tool list_dir");
    assert.deepEqual(JSON.parse(tool.attributes["gen_ai.tool.call.arguments"] as string), { path: "." });
    assert.ok(receiver.spans.some((s) => s.attributes["gen_ai.output.messages"] === "Hello, done."));
    assert.equal(byName(receiver.spans, "invoke_agent greet").resource["service.name"], "hermes");
    assert.ok(receiver.headers.every((h) => h.get("x-from-config") === "yes"));
  } finally {
    await receiver.close();
  }
});

Deno.test("telemetry: off without an endpoint (nothing sent); a collector that is down costs the spans, not the run", async () => {
  const receiver = startOtlpReceiver();
  const dir = await job();
  try {
    const off = await hermes(["run", `${dir}/job.yaml`], { home: `${dir}/home` });
    assert.equal(off.code, 0, off.stderr);
    assert.equal(receiver.bodies.length, 0);
  } finally {
    await receiver.close();
  }
  // The receiver is gone: its port refuses connections.
  const down = await hermes(["run", `${dir}/job.yaml`], {
    home: `${dir}/home`,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stdout, /Hello, done\./);
  assert.match(down.stderr, /telemetry: could not export to the collector/);
});

Deno.test("telemetry: a protocol Hermes does not speak is exit 2 before any model call", async () => {
  const dir = await job();
  const run = await hermes(["run", `${dir}/job.yaml`, "--output", "json"], {
    home: `${dir}/home`,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
  });
  assert.equal(run.code, 2, run.stderr);
  assert.match(
    run.stderr,
    /Cannot export telemetry over OTEL_EXPORTER_OTLP_PROTOCOL=grpc: Hermes sends OTLP as http\/json/,
  );
  assert.equal(JSON.parse(run.stdout).terminal_reason, "invalid_input");
  assert.doesNotMatch(run.stderr, /at .*\.ts:\d+/, "no stack trace");
});

Deno.test("telemetry: hermes rpc exports its sessions' spans when it shuts down (telemetry: in config.yaml)", async () => {
  const receiver = startOtlpReceiver();
  try {
    const dir = await job();
    await writeFiles(dir, { "home/config.yaml": `telemetry:\n  endpoint: ${receiver.url}\n` });
    const client = new RpcClient({ home: `${dir}/home`, cwd: dir });
    try {
      const created = await client.request("session.create", { job: "job.yaml" });
      assert.equal(created.error, undefined, JSON.stringify(created.error));
      const id = (created.result as { session_id: string }).session_id;
      const prompt = await client.request("session.prompt", { session_id: id, text: "list the folder" });
      assert.equal((prompt.result as { status: string }).status, "success");
      assert.equal(receiver.bodies.length, 0, "a server exports at its end (or every 60 s), not per call");
      const { code, stderr } = await client.finish();
      assert.equal(code, 0, stderr);
      const session = byName(receiver.spans, "invoke_agent greet");
      assert.equal(session.attributes["gen_ai.conversation.id"], id);
      const turn = byName(receiver.spans, "hermes.turn");
      assert.equal(turn.attributes["hermes.turn.source"], "rpc");
      assert.equal(turn.parentSpanId, session.spanId);
      assert.equal(receiver.spans.filter((s) => s.name === "chat scripted").length, 2);
      assert.equal(byName(receiver.spans, "execute_tool list_dir").parentSpanId, turn.spanId);
    } finally {
      await client[Symbol.asyncDispose]();
    }
  } finally {
    await receiver.close();
  }
});
