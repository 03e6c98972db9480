/**
 * Webhook triggers over a real `hermes serve`, the scripted model behind it: a GitHub-style signed delivery
 * starts one run with the inputs mapped from its body; a bad or missing signature, an unknown job, a job
 * without a trigger and a replayed delivery start none; an event the trigger does not list is acknowledged and
 * starts none; inputs that do not fit are 422. The generic form (X-Hermes-Timestamp + X-Hermes-Signature-256)
 * is checked with its timestamp.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, readSse, type Reply, startServe } from "../_testing/serve.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

const SECRET = "s3cret-of-the-hook";

function githubSignature(secret: string, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
}

async function deliver(
  url: string,
  payload: unknown,
  headers: Record<string, string>,
): Promise<Reply> {
  return await call(url, {
    method: "POST",
    body: typeof payload === "string" ? payload : JSON.stringify(payload),
    headers,
  });
}

async function fixture() {
  const model = await startOpenAIServer({ script: [{ content: "triaged" }, { content: "triaged" }] });
  const home = await tempDir();
  const modelLine = `model: { name: m, base_url: "${model.url}", api_key_env: none }\n`;
  const jobs = await writeFiles(`${home}/jobs`, {
    "triage.yaml": `name: triage\n${modelLine}` +
      `inputs:\n  repo: { required: true }\n  number: { type: number, required: true }\n  kind: {}\n` +
      `prompt: "triage {{ inputs.repo }}#{{ inputs.number }} ({{ inputs.kind }})"\n` +
      `triggers:\n  webhook:\n    secret_env: HOOK_SECRET\n    events: [issues]\n    inputs:\n` +
      `      repo: "{{ trigger.body.repository.full_name }}"\n` +
      `      number: "{{ trigger.body.issue.number }}"\n` +
      `      kind: "{{ trigger.event }}/{{ trigger.body.action }}"\n`,
    "plain.yaml": `name: plain\n${modelLine}prompt: hello\n`,
    "generic.yaml": `name: generic\n${modelLine}inputs: { what: { required: true } }\n` +
      `prompt: "{{ inputs.what }}"\n` +
      `triggers: { webhook: { secret_env: HOOK_SECRET, signature: hmac-sha256, inputs: { what: "{{ trigger.body.what }}" } } }\n`,
    "unset.yaml": `name: unset\n${modelLine}prompt: hello\n` +
      `triggers: { webhook: { secret_env: HOOK_SECRET_NOT_SET } }\n`,
  });
  const made = await hermes(["tokens", "create", "--scope", "runs:read"], { home });
  assert.equal(made.code, 0, made.stderr);
  return {
    model,
    home,
    jobs,
    reader: made.stdout.trim(),
    async [Symbol.asyncDispose]() {
      await model.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

const issue = {
  action: "opened",
  issue: { number: 42, title: "It breaks" },
  repository: { full_name: "acme/api" },
};

Deno.test("serve hooks: a GitHub-signed delivery starts one run with the mapped inputs; forgeries, unknown jobs, replays and unlisted events start none", async () => {
  await using fx = await fixture();
  await using server = await startServe(fx.home, ["--jobs", fx.jobs], {
    cwd: fx.home,
    env: { HOOK_SECRET: SECRET },
  });
  const hook = (job: string) => `${server.url}/v1/hooks/${job}`;
  const body = JSON.stringify(issue);
  const signed = (event: string, delivery: string, text = body) => ({
    "content-type": "application/json",
    "x-github-event": event,
    "x-github-delivery": delivery,
    "x-hub-signature-256": githubSignature(SECRET, text),
  });

  const started = await deliver(hook("triage"), body, signed("issues", "d-1"));
  assert.equal(started.status, 202, JSON.stringify(started.body));
  assert.equal(started.body.job, "triage");
  assert.equal(started.body.deduplicated, false);
  assert.deepEqual(started.body.inputs, { repo: "acme/api", number: "42", kind: "issues/opened" });
  assert.equal(started.headers.get("location"), `/v1/runs/${started.body.id}`);
  const stream = await readSse(`${server.url}/v1/runs/${started.body.id}/events`, { token: fx.reader });
  assert.equal(JSON.parse(stream.events.at(-1)!.data).status, "success");
  const prompt = JSON.stringify(fx.model.requests[0]);
  assert.match(prompt, /triage acme\/api#42 \(issues\/opened\)/);

  // The same delivery again (GitHub's "Redeliver"): the run it started, nothing new.
  const replay = await deliver(hook("triage"), body, signed("issues", "d-1"));
  assert.equal(replay.status, 202);
  assert.equal(replay.body.id, started.body.id);
  assert.equal(replay.body.deduplicated, true);

  // Sent again as a form (GitHub's x-www-form-urlencoded content type): the same delivery, the same run.
  const form = `payload=${encodeURIComponent(body)}`;
  const asForm = await deliver(hook("triage"), form, {
    ...signed("issues", "d-1", form),
    "content-type": "application/x-www-form-urlencoded",
  });
  assert.equal(asForm.status, 202, JSON.stringify(asForm.body));
  assert.equal(asForm.body.id, started.body.id);

  // Forgeries: a signature made with another secret, one over another body, none at all.
  const forged = await deliver(hook("triage"), body, {
    ...signed("issues", "d-2"),
    "x-hub-signature-256": githubSignature("not-the-secret", body),
  });
  assert.equal(forged.status, 401);
  assert.equal(forged.headers.get("content-type"), "application/problem+json");
  assert.match(forged.body.detail, /does not match the body/);
  const tampered = JSON.stringify({ ...issue, issue: { number: 43 } });
  assert.equal((await deliver(hook("triage"), tampered, signed("issues", "d-3"))).status, 401);
  const { "x-hub-signature-256": _, ...unsigned } = signed("issues", "d-4");
  const missing = await deliver(hook("triage"), body, unsigned);
  assert.equal(missing.status, 401);
  assert.match(missing.body.detail, /no x-hub-signature-256 header/);

  // Unknown job, a job without a trigger, a name outside the folder.
  const unknown = await deliver(hook("nope"), body, signed("issues", "d-5"));
  assert.equal(unknown.status, 404);
  assert.equal(unknown.headers.get("content-type"), "application/problem+json");
  const plain = await deliver(hook("plain"), body, signed("issues", "d-6"));
  assert.equal(plain.status, 404);
  assert.match(plain.body.detail, /has no webhook trigger/);

  // An event the trigger does not list (GitHub's ping when the hook is made, a push): acknowledged, ignored.
  for (const event of ["ping", "push"]) {
    const ignored = await deliver(hook("triage"), body, signed(event, `d-${event}`));
    assert.equal(ignored.status, 200, JSON.stringify(ignored.body));
    assert.deepEqual(ignored.body.status, "ignored");
    assert.equal(ignored.body.event, event);
  }

  // Signed, listed, but the body does not give the inputs: 422, nothing queued.
  const noNumber = JSON.stringify({ ...issue, issue: { title: "no number" } });
  const unfit = await deliver(hook("triage"), noNumber, signed("issues", "d-7", noNumber));
  assert.equal(unfit.status, 422, JSON.stringify(unfit.body));
  assert.match(unfit.body.detail, /input "number".*trigger\.body\.issue\.number.*no such value/);
  const notANumber = JSON.stringify({ ...issue, issue: { number: "forty-two" } });
  const wrongType = await deliver(hook("triage"), notANumber, signed("issues", "d-8", notANumber));
  assert.equal(wrongType.status, 422);
  assert.match(wrongType.body.detail, /number=forty-two: expected a number/);

  const runs = await call(`${server.url}/v1/runs`, { token: fx.reader });
  assert.deepEqual(runs.body.runs.map((r: { id: string }) => r.id), [started.body.id], "one run in all");
  assert.equal(fx.model.requests.length, 1);
  assert.equal(await server.stop(), 0, server.stderr());
});

Deno.test("serve hooks: the generic signature covers the timestamp, which must be recent; an unset secret is the server's 500", async () => {
  await using fx = await fixture();
  await using server = await startServe(fx.home, ["--jobs", fx.jobs], {
    cwd: fx.home,
    env: { HOOK_SECRET: SECRET },
  });
  const body = JSON.stringify({ what: "hello" });
  const headers = (timestamp: number, delivery: string, text = body) => ({
    "content-type": "application/json",
    "x-hermes-timestamp": String(timestamp),
    "x-hermes-delivery": delivery,
    "x-hermes-signature-256": "sha256=" +
      createHmac("sha256", SECRET).update(`${timestamp}.${text}`).digest("hex"),
  });
  const now = Math.floor(Date.now() / 1000);
  const url = `${server.url}/v1/hooks/generic`;

  const stale = await deliver(url, body, headers(now - 3600, "g-1"));
  assert.equal(stale.status, 401);
  assert.match(stale.body.detail, /more than 5 minutes from now/);
  // The timestamp is signed: a fresh timestamp on an old signature does not pass.
  const moved = { ...headers(now - 3600, "g-2"), "x-hermes-timestamp": String(now) };
  assert.equal((await deliver(url, body, moved)).status, 401);

  const ok = await deliver(url, body, headers(now, "g-3"));
  assert.equal(ok.status, 202, JSON.stringify(ok.body));
  assert.deepEqual(ok.body.inputs, { what: "hello" });
  const again = await deliver(url, body, headers(now, "g-3"));
  assert.equal(again.body.id, ok.body.id);
  assert.equal(again.body.deduplicated, true);

  const unset = await deliver(`${server.url}/v1/hooks/unset`, body, {
    "content-type": "application/json",
    "x-hub-signature-256": githubSignature("", body),
  });
  assert.equal(unset.status, 500);
  assert.doesNotMatch(JSON.stringify(unset.body), /HOOK_SECRET_NOT_SET/, "the sender is not told");
  assert.match(server.stderr(), /HOOK_SECRET_NOT_SET is not set in the server's environment/);

  const runs = await call(`${server.url}/v1/runs`, { token: fx.reader });
  assert.equal(runs.body.runs.length, 1);
  assert.equal(await server.stop(), 0, server.stderr());
});

Deno.test("serve hooks: the trust policy judges a signed delivery's job (422, nothing queued); an unsigned one learns nothing of it", async () => {
  await using fx = await fixture();
  await Deno.writeTextFile(`${fx.home}/policy.yaml`, 'models: { base_urls: ["https://api.openai.com/*"] }\n');
  await using server = await startServe(fx.home, ["--jobs", fx.jobs, "--policy", `${fx.home}/policy.yaml`], {
    cwd: fx.home,
    env: { HOOK_SECRET: SECRET },
  });
  const body = JSON.stringify(issue);
  const headers = {
    "content-type": "application/json",
    "x-github-event": "issues",
    "x-github-delivery": "p-1",
    "x-hub-signature-256": githubSignature(SECRET, body),
  };
  const signed = await deliver(`${server.url}/v1/hooks/triage`, body, headers);
  assert.equal(signed.status, 422, JSON.stringify(signed.body));
  assert.match(signed.body.detail, /base_url/);
  const unsigned = await deliver(`${server.url}/v1/hooks/triage`, body, {
    ...headers,
    "x-hub-signature-256": githubSignature("guess", body),
  });
  assert.equal(unsigned.status, 401);
  assert.doesNotMatch(JSON.stringify(unsigned.body), /base_url/);
  assert.deepEqual((await call(`${server.url}/v1/runs`, { token: fx.reader })).body.runs, []);
  assert.equal(fx.model.requests.length, 0);
  assert.equal(await server.stop(), 0, server.stderr());
});

Deno.test("serve hooks: a trigger mapping an undeclared input or an unknown reference is the job's error", async () => {
  const home = await tempDir();
  try {
    const jobs = await writeFiles(`${home}/jobs`, {
      "bad.yaml": `name: bad\nprompt: hi\ninputs: { repo: {} }\n` +
        `triggers:\n  webhook:\n    secret_env: S\n    inputs:\n      repo: "{{ trigger.headers.x }}"\n` +
        `      other: "{{ trigger.event }}"\n`,
      "good.yaml": `name: good\nprompt: hi\ninputs: { repo: {} }\n` +
        `triggers: { webhook: { secret_env: S, inputs: { repo: "{{ trigger.body.repository.full_name }}" } } }\n`,
    });
    const bad = await hermes(["validate", `${jobs}/bad.yaml`], { home });
    assert.equal(bad.code, 2, bad.stdout + bad.stderr);
    const text = bad.stdout + bad.stderr;
    assert.match(text, /bad\.yaml:8:\d+: triggers\.webhook\.inputs\.repo: unknown template reference/);
    assert.match(
      text,
      /bad\.yaml:9:\d+: triggers\.webhook\.inputs\.other: "other" is not one of the job's inputs/,
    );
    const good = await hermes(["validate", `${jobs}/good.yaml`], { home });
    assert.equal(good.code, 0, good.stdout + good.stderr);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
