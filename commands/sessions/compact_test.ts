/** `hermes sessions compact` through the real CLI, with the session's own (scripted) model. */
import assert from "node:assert/strict";
import { tempStore } from "../../runtime/session_admin/_testing.ts";
import { ROOT, tempDir, writeFiles } from "../../tests/_testing/cli.ts";
import { startOpenAIServer } from "../../tests/_testing/openai_server.ts";
import { hermes, isUserError, storedRelease } from "./_testing.ts";
import { withoutSandbox } from "../../tests/_testing/sandbox.ts";

/** One stored message; `{i}` is its index. */
const STEP = `step {i}: ${"a detailed progress report on the release checks ".repeat(12)}`;

const SUMMARY = [
  "## Goal\nShip the release.",
  "## Constraints\nnone",
  "## Progress\nRan the checks.",
  "## Decisions\nnone",
  "## Files and identifiers\nCHANGELOG.md",
  "## Next steps\nTag it.",
].join("\n");

Deno.test("sessions compact summarises the middle with the session's model; a second run has nothing to do", async () => {
  await using fx = await tempStore();
  const id = await storedRelease(fx, [{ content: SUMMARY }], { text: STEP });

  const first = await hermes([
    "sessions",
    "compact",
    id,
    "--focus",
    "the release",
    "--json",
    "--home",
    fx.dir,
  ]);
  assert.equal(first.code, 0, first.stderr);
  const outcome = JSON.parse(first.stdout);
  assert.equal(outcome.session_id, id);
  assert.equal(outcome.changed, true);
  assert.equal(outcome.kind, "summarize");
  assert.ok(outcome.after_tokens < outcome.before_tokens);

  const shown = JSON.parse(
    (await hermes(["sessions", "show", id, "--all", "--json", "--home", fx.dir])).stdout,
  );
  const inactive = shown.messages.filter((m: { active: boolean }) => !m.active);
  const summaries = shown.messages.filter((m: { kind: string }) => m.kind === "summary");
  assert.equal(inactive.length - summaries.length, outcome.messages_removed, "active before − after");
  assert.equal(summaries.length, 1);
  assert.match(summaries[0].content, /Ship the release/);

  const second = await hermes(["sessions", "compact", id, "--home", fx.dir]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, new RegExp(`^${id}: nothing compacted: `));

  const missing = await hermes(["sessions", "compact", "nope", "--home", fx.dir]);
  assert.ok(isUserError(missing), missing.stderr);
  assert.match(missing.stderr, /unknown session id "nope"/);
});

Deno.test("sessions compact exits 1 and changes nothing when the summary call fails", async () => {
  await using fx = await tempStore();
  await Deno.writeTextFile(
    `${fx.dir}/replies.json`,
    JSON.stringify([{ error: { status: 400, message: "model unavailable" } }]),
  );
  const spec = {
    name: "x",
    model: { provider: "scripted", script: "replies.json" },
    compaction: { protect_first: 1, protect_last: 1 },
  };
  const id =
    (await fx.store.createSession({ job: "x", config_json: JSON.stringify({ spec, dir: fx.dir }) })).id;
  await fx.store.appendMessages(
    id,
    Array.from({ length: 6 }, (_, i) => ({ role: "user" as const, content: `m${i} `.repeat(200) })),
  );

  const r = await hermes(["sessions", "compact", id, "--home", fx.dir]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /nothing compacted: .*model unavailable/);
  assert.equal((await fx.store.activeMessages(id)).length, 6);
});

Deno.test({
  name: "sessions compact tells the stored job's own plugins: the memory plugin re-injects its rules",
  ignore: withoutSandbox,
}, async () => {
  const RULES = "RULE-42: never push to main";
  const server = await startOpenAIServer([
    { content: "Here is a very detailed answer. ".repeat(80) },
    { content: "second answer" },
    { match: "<messages>", content: "## Goal\nTriage.\n## Progress\nTwo answers given." },
    { content: "third answer" },
  ]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: seed
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY }
prompt: first question
steps: [second question]
compaction: { protect_first: 1, protect_last: 2 }
plugins:
  - path: ${ROOT}/examples/plugins/memory
    permissions: { read: ["./notes"] }
    config: { rules: "${RULES}", every_turn: false }
`,
    });
    const env = { TEST_KEY: "k" };
    const first = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
    assert.equal(first.code, 0, first.stderr);
    const id = JSON.parse(first.stdout).session_id;
    const compacted = await hermes(["sessions", "compact", id, "--json"], { cwd: dir, home: dir, env });
    assert.equal(compacted.code, 0, compacted.stderr);
    assert.equal(JSON.parse(compacted.stdout).changed, true);
    const again = await hermes(["run", "-p", "third question", "--resume", id], { cwd: dir, home: dir, env });
    assert.equal(again.code, 0, again.stderr);
    const lastUser = (i: number) =>
      (server.requests[i]!.messages as { role: string; content: string }[]).filter((m) => m.role === "user")
        .at(-1)!.content;
    assert.equal(server.requests.length, 4);
    assert.match(lastUser(0), /RULE-42/);
    assert.doesNotMatch(lastUser(1), /RULE-42/, "every_turn: false");
    assert.match(
      lastUser(3),
      /^third question[\s\S]*RULE-42/,
      "re-injected: the plugin learned of the compaction",
    );
  } finally {
    await server.close();
  }
});

Deno.test("sessions compact writes the summary through the session's outlets: a secret in it is not stored", async () => {
  await using fx = await tempStore();
  const secret = "tok-summary-8e7d6c5b4a";
  const id = await storedRelease(fx, [{ content: `${SUMMARY}\nThe deploy token is ${secret}.` }], {
    text: STEP,
  });
  const run = await hermes(["sessions", "compact", id, "--home", fx.dir], { env: { DEPLOY_TOKEN: secret } });
  assert.equal(run.code, 0, run.stderr);
  const shown = JSON.parse((await hermes(["sessions", "show", id, "--json", "--home", fx.dir])).stdout);
  const summary = shown.messages.find((m: { kind: string }) => m.kind === "summary");
  assert.match(summary.content, /The deploy token is \[REDACTED:DEPLOY_TOKEN\]\./);
  assert.ok(!JSON.stringify(shown).includes(secret));
});
