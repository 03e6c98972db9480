/**
 * Many `hermes serve` on one PostgreSQL store behave as one: a run submitted to one server is worked by
 * another's worker and streamed from either (events come from the store); a token revoked through the CLI
 * is refused by both at once; the worker's server SIGKILLed mid-run leaves the run to on_crash (skip: it
 * ends crashed, its stream ends), worked by none twice. Skipped without HERMES_TEST_POSTGRES_URL.
 */
import assert from "node:assert/strict";
import { scratchDatabase } from "../../runtime/store/postgres/_testing.ts";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, readSse, startServe } from "../_testing/serve.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

const serverUrl = Deno.env.get("HERMES_TEST_POSTGRES_URL");

Deno.test({
  name:
    "serve on postgres: submit to one server, stream from another; revoke holds on both; a killed worker's run ends per on_crash",
  ignore: !serverUrl,
  async fn() {
    await using db = await scratchDatabase(serverUrl!, "hermes_serve");
    const model = await startOpenAIServer({
      script: [{ match: "slow", delay: "60s", content: "never" }, { match: "hello", content: "hello back" }],
    });
    const home = await tempDir();
    const jobs = await writeFiles(`${home}/jobs`, {
      "greet.yaml": `name: greet\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\n` +
        `inputs: { what: { required: true } }\nprompt: "{{ inputs.what }}"\n`,
    });
    try {
      const made = await hermes(["tokens", "create", "--scope", "admin", "--db", db.url], { home });
      assert.equal(made.code, 0, made.stderr);
      const token = made.stdout.trim();
      const doomed = (await hermes(["tokens", "create", "--scope", "runs:read", "--db", db.url], { home }))
        .stdout
        .trim();
      await using front = await startServe(home, ["--db", db.url, "--jobs", jobs, "--no-worker"], {
        cwd: home,
      });
      const back = await startServe(home, ["--db", db.url, "--jobs", jobs], { cwd: home });
      try {
        const ok = await call(`${front.url}/v1/runs`, {
          token,
          body: { job: "greet", inputs: { what: "hello" } },
        });
        assert.equal(ok.status, 202, JSON.stringify(ok.body));
        const fromFront = await readSse(`${front.url}/v1/runs/${ok.body.id}/events`, { token });
        const fromBack = await readSse(`${back.url}/v1/runs/${ok.body.id}/events`, { token });
        assert.equal(fromFront.events.at(-1)!.event, "result");
        assert.equal(JSON.parse(fromFront.events.at(-1)!.data).final, "hello back");
        assert.deepEqual(fromBack.events, fromFront.events);

        assert.equal((await call(`${front.url}/v1/runs`, { token: doomed })).status, 200);
        const list = JSON.parse(
          (await hermes(["tokens", "list", "--json", "--db", db.url], { home })).stdout,
        );
        const id = list.find((t: { scopes: string[] }) => t.scopes[0] === "runs:read").id;
        assert.equal((await hermes(["tokens", "revoke", id, "--db", db.url], { home })).code, 0);
        assert.equal((await call(`${front.url}/v1/runs`, { token: doomed })).status, 401);
        assert.equal((await call(`${back.url}/v1/runs`, { token: doomed })).status, 401);

        const slow = await call(`${front.url}/v1/runs`, {
          token,
          body: { job: "greet", inputs: { what: "slow" } },
        });
        const stream = readSse(`${front.url}/v1/runs/${slow.body.id}/events`, { token });
        for (let i = 0; i < 600 && model.requests.length < 2; i++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(model.requests.length, 2, "the slow run reached the model");
        back.child.kill("SIGKILL");
        await back.stop();
        // A new worker finds the dead worker's run and applies on_crash (skip: crashed, not run again).
        await using rescuer = await startServe(home, ["--db", db.url, "--jobs", jobs], { cwd: home });
        const ended = await stream;
        assert.equal(ended.events.at(-1)!.event, "end");
        const run = await call(`${rescuer.url}/v1/runs/${slow.body.id}`, { token });
        assert.equal(run.body.status, "crashed");
        assert.equal(run.body.attempts, 1);
        assert.equal(model.requests.length, 2, "nothing ran twice");
      } finally {
        await back.stop();
      }
    } finally {
      await model.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});
