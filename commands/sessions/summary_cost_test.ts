/**
 * A summary call is billed like any other model call: `hermes sessions compact` against the scripted
 * OpenAI-compatible server adds the summary's tokens and, by model.pricing, its cost to the session, and
 * records it as one model call that `hermes cost` reports.
 */
import assert from "node:assert/strict";
import { tempStore } from "../../runtime/session_admin/_testing.ts";
import { startOpenAIServer } from "../../tests/_testing/openai_server.ts";
import { hermes } from "./_testing.ts";

Deno.test("sessions compact: the summary call's tokens and cost are the session's", async () => {
  await using fx = await tempStore();
  const server = await startOpenAIServer([{
    content: "## Goal\nShip it.\n## Progress\nDone.",
    usage: { prompt_tokens: 3000, completion_tokens: 500, cached_tokens: 1000 },
  }]);
  try {
    const spec = {
      name: "release",
      model: {
        name: "m",
        base_url: server.url,
        api_key_env: "none",
        context_window: 4000,
        pricing: { input: 2, output: 8, cached_input: 0.5 },
      },
      compaction: { protect_first: 1, protect_last: 2 },
    };
    const id =
      (await fx.store.createSession({ job: "release", config_json: JSON.stringify({ spec, dir: fx.dir }) }))
        .id;
    await fx.store.appendMessages(
      id,
      Array.from({ length: 10 }, (_, i) => ({
        role: i % 2 === 0 ? "user" as const : "assistant" as const,
        content: `step ${i}: ${"a detailed progress report ".repeat(12)}`,
      })),
    );
    const run = await hermes(["sessions", "compact", id, "--home", fx.dir]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(server.requests.length, 1, "one summary call");
    const shown = await hermes(["sessions", "show", id, "--json", "--home", fx.dir]);
    assert.equal(shown.code, 0, shown.stderr);
    const { session } = JSON.parse(shown.stdout);
    assert.deepEqual(
      [session.prompt_tokens, session.completion_tokens, session.cached_tokens, session.turns],
      [3000, 500, 1000, 0],
      "tokens counted, and a summary call is not a turn",
    );
    const cost = (2000 * 2 + 1000 * 0.5 + 500 * 8) / 1e6;
    assert.ok(Math.abs(session.cost_usd - cost) < 1e-9, `${session.cost_usd} ≈ ${cost}`);
    // Recorded as one model call of the session's job, under the summary's model, for hermes cost.
    const report = await hermes(["cost", "--json", "--by", "job", "--by", "model", "--home", fx.dir]);
    assert.equal(report.code, 0, report.stderr);
    const [group, ...others] = JSON.parse(report.stdout).groups;
    assert.deepEqual(others, []);
    assert.deepEqual(
      [group.job, group.model, group.calls, group.sessions, group.input_tokens, group.output_tokens],
      ["release", "m", 1, 1, 3000, 500],
    );
    assert.ok(Math.abs(group.cost_usd - cost) < 1e-9, `${group.cost_usd} ≈ ${cost}`);
  } finally {
    await server.close();
  }
});
