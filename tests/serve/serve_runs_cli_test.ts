/**
 * Runs over HTTP against a real `hermes serve` working the queue, the scripted model behind it: submit →
 * events (SSE) until the result → GET the run, for success, failure and cancel; a stream dropped and resumed
 * with Last-Event-ID gives every event once; job names, inline jobs (admin only), keys, the SSE cap and
 * --no-worker.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, readSse, type SseEvent, startServe } from "../_testing/serve.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

async function token(home: string, ...scopes: string[]): Promise<string> {
  const made = await hermes(["tokens", "create", ...scopes.flatMap((s) => ["--scope", s])], { home });
  assert.equal(made.code, 0, made.stderr);
  return made.stdout.trim();
}

async function fixture() {
  const model = await startOpenAIServer({
    script: [
      { match: "fail", error: { status: 400, message: "this request is refused" } },
      { match: "slow", delay: "60s", content: "too late" },
      { match: "hello", tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
      { match: "hello", content: "hello back" },
    ],
  });
  const home = await tempDir();
  const jobs = await writeFiles(`${home}/jobs`, {
    "greet.yaml": `name: greet\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\n` +
      `inputs: { what: { required: true } }\nprompt: "{{ inputs.what }}"\ntools:\n  list_dir: { paths: ["."] }\n`,
  });
  return {
    model,
    home,
    jobs,
    inline: {
      name: "inline",
      model: { name: "m", base_url: model.url, api_key_env: "none" },
      prompt: "hello",
    },
    async [Symbol.asyncDispose]() {
      await model.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

function seqs(events: SseEvent[]): number[] {
  return events.filter((e) => e.id !== undefined).map((e) => Number(e.id));
}

Deno.test("serve runs: submit → SSE until the result → GET the run, for success and failure", async () => {
  await using fx = await fixture();
  const writer = await token(fx.home, "runs:read", "runs:write");
  await using server = await startServe(fx.home, ["--jobs", fx.jobs], { cwd: fx.home });

  const ok = await call(`${server.url}/v1/runs`, {
    token: writer,
    body: { job: "greet", inputs: { what: "hello" } },
  });
  assert.equal(ok.status, 202, JSON.stringify(ok.body));
  assert.equal(ok.body.job, "greet");
  assert.equal(ok.body.deduplicated, false);
  assert.deepEqual(ok.body.inputs, { what: "hello" });
  assert.equal(ok.headers.get("location"), `/v1/runs/${ok.body.id}`);
  assert.equal(Object.hasOwn(ok.body, "job_snapshot"), false);

  const stream = await readSse(`${server.url}/v1/runs/${ok.body.id}/events`, { token: writer });
  assert.equal(stream.status, 200);
  const ids = seqs(stream.events);
  assert.deepEqual(ids, ids.map((_, i) => i + 1), "ids are the seqs, from 1, none missing");
  const last = stream.events.at(-1)!;
  assert.equal(last.event, "result");
  const result = JSON.parse(last.data);
  assert.equal(result.status, "success");
  assert.equal(result.final, "hello back");
  assert.ok(stream.events.some((e) => e.event === "tool.result"), "the tool round is streamed");
  for (const e of stream.events) {
    assert.equal(JSON.parse(e.data).type, e.event);
    assert.equal(JSON.parse(e.data).seq, Number(e.id), "the id is the event's own seq");
  }

  const run = await call(`${server.url}/v1/runs/${ok.body.id}`, { token: writer });
  assert.equal(run.status, 200);
  assert.equal(run.body.status, "success");
  const { seq: _seq, ts: _ts, ...resultObject } = result;
  assert.deepEqual(run.body.result, resultObject);
  assert.equal(run.body.session_id, result.session_id);

  const bad = await call(`${server.url}/v1/runs`, {
    token: writer,
    body: { job: "greet", inputs: { what: "fail" } },
  });
  assert.equal(bad.status, 202);
  const failed = await readSse(`${server.url}/v1/runs/${bad.body.id}/events`, { token: writer });
  assert.equal(failed.events.at(-1)!.event, "result");
  assert.equal(JSON.parse(failed.events.at(-1)!.data).status, "failed");
  assert.equal((await call(`${server.url}/v1/runs/${bad.body.id}`, { token: writer })).body.status, "failed");

  const metrics = (await call(`${server.url}/metrics`)).body as string;
  assert.match(metrics, /^hermes_runs\{status="success"\} 1$/m);
  assert.match(metrics, /^hermes_runs\{status="failed"\} 1$/m);
  assert.match(metrics, /^hermes_runs\{status="queued"\} 0$/m);
  assert.match(metrics, /^hermes_model_calls_total\{model="m"\} 2$/m, "the failed call recorded no usage");
  assert.match(metrics, /^hermes_model_tokens_total\{model="m",kind="input"\} \d+$/m);

  const list = await call(`${server.url}/v1/runs?status=success`, { token: writer });
  assert.deepEqual(list.body.runs.map((r: { id: string }) => r.id), [ok.body.id]);
  assert.equal(await server.stop(), 0, server.stderr());
});

Deno.test("serve runs: a stream dropped after two events and resumed with Last-Event-ID gives every event once", async () => {
  await using fx = await fixture();
  const writer = await token(fx.home, "runs:read", "runs:write");
  await using server = await startServe(fx.home, ["--jobs", fx.jobs], { cwd: fx.home });
  const ok = await call(`${server.url}/v1/runs`, {
    token: writer,
    body: { job: "greet", inputs: { what: "hello" } },
  });
  const url = `${server.url}/v1/runs/${ok.body.id}/events`;
  const first = await readSse(url, { token: writer, max: 2 });
  assert.deepEqual(seqs(first.events), [1, 2]);
  const rest = await readSse(url, { token: writer, lastEventId: first.events[1]!.id! });
  const whole = await readSse(url, { token: writer });
  assert.deepEqual([...first.events, ...rest.events], whole.events);
  assert.equal(whole.events.at(-1)!.event, "result");
  const bad = await readSse(url, { token: writer, lastEventId: "two" });
  assert.equal(bad.status, 400);
  assert.equal(await server.stop(), 0, server.stderr());
});

Deno.test("serve runs: cancel stops a running run; its stream ends with the result", async () => {
  await using fx = await fixture();
  const writer = await token(fx.home, "runs:read", "runs:write");
  await using server = await startServe(fx.home, ["--jobs", fx.jobs], { cwd: fx.home });
  const slow = await call(`${server.url}/v1/runs`, {
    token: writer,
    body: { job: "greet", inputs: { what: "slow" } },
  });
  const url = `${server.url}/v1/runs/${slow.body.id}/events`;
  // Wait until the model has the request (the run is running), then cancel it.
  const started = await readSse(url, { token: writer, max: 1 });
  assert.equal(started.events.length, 1);
  for (let i = 0; i < 600 && fx.model.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  const cancelled = await call(`${server.url}/v1/runs/${slow.body.id}/cancel`, {
    token: writer,
    method: "POST",
  });
  assert.equal(cancelled.status, 202, JSON.stringify(cancelled.body));
  const stream = await readSse(url, { token: writer });
  assert.equal(stream.events.at(-1)!.event, "result");
  const run = await call(`${server.url}/v1/runs/${slow.body.id}`, { token: writer });
  assert.equal(run.body.status, "cancelled");
  assert.equal(await server.stop(), 0, server.stderr());
});

Deno.test("serve runs: names, inline jobs for admin only, keys, 404s, the stream cap, --no-worker", async () => {
  await using fx = await fixture();
  const writer = await token(fx.home, "runs:read", "runs:write");
  const reader = await token(fx.home, "runs:read");
  const admin = await token(fx.home, "admin");
  await using server = await startServe(fx.home, ["--jobs", fx.jobs, "--no-worker", "--max-streams", "1"], {
    cwd: fx.home,
  });
  const post = (body: unknown, t = writer) => call(`${server.url}/v1/runs`, { token: t, body });
  assert.equal((await post({ job: "greet", inputs: { what: "x" } }, reader)).status, 403);
  assert.equal((await post({ job: "nope" })).status, 404);
  assert.equal((await post({ job: "../greet" })).status, 400);
  const missing = await post({ job: "greet" });
  assert.equal(missing.status, 400, "a required input missing is refused as hermes submit refuses it");
  assert.match(missing.body.detail, /what/);
  assert.equal((await post({ job: fx.inline })).status, 403, "an inline job needs admin");
  const inline = await post({ job: fx.inline }, admin);
  assert.equal(inline.status, 202, JSON.stringify(inline.body));
  const keyed = await post({ job: "greet", inputs: { what: "hello" }, key: "k1", priority: 5 });
  const again = await post({ job: "greet", inputs: { what: "other" }, key: "k1" });
  assert.equal(again.body.id, keyed.body.id);
  assert.equal(again.body.deduplicated, true);
  assert.equal(keyed.body.priority, 5);
  assert.equal((await call(`${server.url}/v1/runs/zzzz`, { token: reader })).status, 404);

  // --no-worker: the run stays queued, so its stream stays open; a second stream of the same token is over the cap.
  const open = fetch(`${server.url}/v1/runs/${keyed.body.id}/events`, {
    headers: { authorization: `Bearer ${reader}` },
  });
  const response = await open;
  assert.equal(response.status, 200);
  const second = await readSse(`${server.url}/v1/runs/${keyed.body.id}/events`, { token: reader });
  assert.equal(second.status, 429);
  assert.equal(
    (await readSse(`${server.url}/v1/runs/${inline.body.id}/events`, { token: admin, max: 0 })).status,
    200,
    "another token has its own cap",
  );
  await response.body!.cancel();
  assert.equal(
    (await call(`${server.url}/v1/runs/${keyed.body.id}`, { token: reader })).body.status,
    "queued",
  );
  const cancelled = await call(`${server.url}/v1/runs/${keyed.body.id}/cancel`, {
    token: writer,
    method: "POST",
  });
  assert.equal(cancelled.body.status, "cancelled");
  assert.equal(await server.stop(), 0, server.stderr());
});

Deno.test("serve runs: SIGTERM ends open event streams with a last event and exits 0", async () => {
  await using fx = await fixture();
  const reader = await token(fx.home, "runs:read", "runs:write");
  await using server = await startServe(fx.home, ["--jobs", fx.jobs, "--no-worker"], { cwd: fx.home });
  const queued = await call(`${server.url}/v1/runs`, {
    token: reader,
    body: { job: "greet", inputs: { what: "x" } },
  });
  const streaming = readSse(`${server.url}/v1/runs/${queued.body.id}/events`, { token: reader });
  // The stream is open once the server counts it; then stop the server.
  for (let i = 0; i < 200; i++) {
    const metrics = await call(`${server.url}/metrics`);
    if (/route="\/v1\/runs\/:id\/events",code="200"/.test(metrics.body)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const code = await server.stop();
  const stream = await streaming;
  assert.equal(code, 0, server.stderr());
  assert.deepEqual(stream.events.map((e) => e.event), ["end"]);
  assert.deepEqual(JSON.parse(stream.events[0]!.data), { reason: "server_stopping" });
});

Deno.test("serve runs: the trust policy bounds named and inline jobs alike; nothing is queued", async () => {
  await using fx = await fixture();
  const admin = await token(fx.home, "admin");
  await Deno.writeTextFile(`${fx.home}/policy.yaml`, 'models: { base_urls: ["https://api.openai.com/*"] }\n');
  await using server = await startServe(fx.home, ["--jobs", fx.jobs, "--policy", `${fx.home}/policy.yaml`], {
    cwd: fx.home,
  });
  const named = await call(`${server.url}/v1/runs`, {
    token: admin,
    body: { job: "greet", inputs: { what: "x" } },
  });
  assert.equal(named.status, 400, JSON.stringify(named.body));
  assert.match(named.body.detail, /base_url/);
  const inline = await call(`${server.url}/v1/runs`, { token: admin, body: { job: fx.inline } });
  assert.equal(inline.status, 400, JSON.stringify(inline.body));
  assert.match(inline.body.detail, /base_url/);
  assert.deepEqual((await call(`${server.url}/v1/runs`, { token: admin })).body.runs, []);
  assert.equal(await server.stop(), 0, server.stderr());
});
