/**
 * A queued run carries the labels of its submitter — its CI's, the job's `labels:` and `hermes submit
 * --label` — to the worker that runs it: the run record, its session and `hermes cost --by label:KEY` have
 * them, not the worker's environment's. Real processes (submit, a daemon working the queue) on SQLite.
 */
import assert from "node:assert/strict";
import { hermes, MAIN, ROOT, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

const SUBMITTER_CI = {
  GITHUB_ACTIONS: "true",
  GITHUB_REPOSITORY: "octo/widgets",
  GITHUB_RUN_ID: "4242",
  GITHUB_SHA: "feedface",
};

Deno.test("queue: a queued run and its session carry the submitter's labels, not the worker's", async () => {
  const server = await startOpenAIServer([{
    content: "queued and done",
    usage: { prompt_tokens: 10, completion_tokens: 2 },
  }]);
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: queued\nmodel: { name: m, base_url: "${server.url}", api_key_env: none }\n` +
      `labels: { team: platform }\nprompt: hello\n`,
  });
  const home = `${dir}/home`;
  const daemon = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--home", home, "daemon"],
    cwd: ROOT,
    // The worker runs in another CI run: its labels must not be the run's.
    env: { NO_COLOR: "1", GITHUB_ACTIONS: "true", GITHUB_REPOSITORY: "octo/worker", GITHUB_RUN_ID: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const submitted = await hermes(
      ["submit", "job.yaml", "--label", "pr=7", "--output", "json"],
      { cwd: dir, home, env: SUBMITTER_CI },
    );
    assert.equal(submitted.code, 0, submitted.stderr);
    const { run_id } = JSON.parse(submitted.stdout);
    const waited = await hermes(["runs", "wait", run_id, "--output", "json", "--timeout", "120s"], { home });
    assert.equal(waited.code, 0, waited.stderr);
    const result = JSON.parse(waited.stdout);
    const labels = {
      "ci.provider": "github",
      "ci.repository": "octo/widgets",
      "ci.run_id": "4242",
      "ci.sha": "feedface",
      team: "platform",
      pr: "7",
    };
    assert.deepEqual(result.labels, labels);
    const shown = await hermes(["sessions", "show", result.session_id, "--json"], { home });
    assert.deepEqual(JSON.parse(shown.stdout).session.labels, labels);
    const cost = await hermes(["cost", "--json", "--by", "label:ci.repository"], { home });
    assert.deepEqual(
      JSON.parse(cost.stdout).groups.map((g: { labels: Record<string, string>; calls: number }) => [
        g.labels["ci.repository"],
        g.calls,
      ]),
      [["octo/widgets", 1]],
    );
    const bad = await hermes(["submit", "job.yaml", "--label", "nope"], { cwd: dir, home });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^hermes submit: invalid --label "nope"/);
  } finally {
    daemon.kill("SIGTERM");
    await daemon.status;
    await server.close();
  }
});
