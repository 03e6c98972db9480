import assert from "node:assert/strict";
import { ciLabels, parseLabelFlags, runLabels } from "./labels.ts";

Deno.test("ciLabels: GitHub Actions' variables, the pull request from refs/pull/N/merge", () => {
  assert.deepEqual(
    ciLabels({
      GITHUB_ACTIONS: "true",
      GITHUB_REPOSITORY: "octo/widgets",
      GITHUB_WORKFLOW: "triage",
      GITHUB_RUN_ID: "17",
      GITHUB_RUN_ATTEMPT: "1",
      GITHUB_REF: "refs/pull/42/merge",
      GITHUB_REF_NAME: "42/merge",
      GITHUB_HEAD_REF: "fix-it",
      GITHUB_SHA: "abc",
    }),
    {
      "ci.provider": "github",
      "ci.repository": "octo/widgets",
      "ci.workflow": "triage",
      "ci.run_id": "17",
      "ci.run_attempt": "1",
      "ci.ref": "fix-it",
      "ci.sha": "abc",
      "ci.pull_request": "42",
    },
  );
});

Deno.test("ciLabels: a push has its branch and no pull request; unset variables give no label", () => {
  assert.deepEqual(
    ciLabels({
      GITHUB_ACTIONS: "true",
      GITHUB_REF: "refs/heads/main",
      GITHUB_REF_NAME: "main",
      GITHUB_SHA: "abc",
    }),
    { "ci.provider": "github", "ci.ref": "main", "ci.sha": "abc" },
  );
});

Deno.test("ciLabels: the pull request number from the event payload when the ref does not tell", async () => {
  const event = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(event, JSON.stringify({ number: 7, pull_request: { number: 7 } }));
    const env = {
      GITHUB_ACTIONS: "true",
      GITHUB_EVENT_NAME: "pull_request_target",
      GITHUB_EVENT_PATH: event,
    };
    assert.equal(ciLabels(env)["ci.pull_request"], "7");
    assert.equal(ciLabels({ ...env, GITHUB_EVENT_NAME: "push" })["ci.pull_request"], undefined);
    await Deno.writeTextFile(event, "not json");
    assert.equal(ciLabels(env)["ci.pull_request"], undefined);
  } finally {
    await Deno.remove(event);
  }
});

Deno.test("ciLabels: GitLab CI's equivalents; nothing outside CI", () => {
  assert.deepEqual(
    ciLabels({
      GITLAB_CI: "true",
      CI_PROJECT_PATH: "group/proj",
      CI_PIPELINE_ID: "900",
      CI_JOB_ID: "901",
      CI_JOB_NAME: "review",
      CI_COMMIT_REF_NAME: "feature",
      CI_COMMIT_SHA: "def",
      CI_MERGE_REQUEST_IID: "12",
    }),
    {
      "ci.provider": "gitlab",
      "ci.repository": "group/proj",
      "ci.workflow": "review",
      "ci.run_id": "900",
      "ci.job_id": "901",
      "ci.ref": "feature",
      "ci.sha": "def",
      "ci.pull_request": "12",
    },
  );
  assert.deepEqual(ciLabels({ GITHUB_REPOSITORY: "octo/widgets", CI: "true" }), {});
});

Deno.test("runLabels: CI, then the job's, then --label; parseLabelFlags checks keys and lengths", () => {
  const env = { GITHUB_ACTIONS: "true", GITHUB_REPOSITORY: "octo/widgets" };
  assert.deepEqual(
    runLabels({
      env,
      job: { "ci.repository": "mine", team: "a" },
      flags: parseLabelFlags(["team=b", "x.y=1=2"]),
    }),
    { "ci.provider": "github", "ci.repository": "mine", team: "b", "x.y": "1=2" },
  );
  assert.deepEqual(parseLabelFlags(["empty="]), { empty: "" });
  assert.throws(() => parseLabelFlags(["=v"]), /invalid --label "=v"/);
  assert.throws(() => parseLabelFlags(["a b=v"]), /invalid --label/);
  assert.throws(() => parseLabelFlags([`k=${"v".repeat(257)}`]), /at most 256 characters, got 257/);
  assert.deepEqual(parseLabelFlags([`k=${"v".repeat(256)}`]), { k: "v".repeat(256) });
});
