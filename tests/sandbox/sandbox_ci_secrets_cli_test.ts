/**
 * A CI runner's credentials stay out of a sandboxed command, through `hermes run` and the real bwrap: the
 * user's global git config is shown without the token of its `insteadOf` URL (`git config --global` too), a
 * self-hosted runner's registration files and `_runner_file_commands` (earlier steps' GITHUB_ENV) are hidden,
 * and another checkout's `.git/config` is shown without its extraheader. The neighbours: the rest of each
 * config and the other checkout's files are still there.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

Deno.test({
  name: "run: a runner's tokens, registration and earlier steps' files are out of the sandbox's reach",
  ignore: withoutSandbox,
  async fn() {
    // Everything below the job directory, which the sandbox shows (the default temp directory is private).
    const dir = await Deno.realPath(await tempDir());
    const root = `${dir}/runner`;
    const work = `${root}/_work`;
    const commands = `${work}/_temp/_runner_file_commands`;
    const sibling = `${work}/other/other`;
    const command = [
      "cat home/.gitconfig",
      "git config --global --list",
      `cat ${root}/.credentials_rsaparams ${root}/.credentials ${root}/.runner`,
      `cat ${commands}/set_env_1`,
      `cat ${sibling}/.git/config ${sibling}/README`,
    ].map((c) => `${c} 2>&1`).join("; ");
    await writeFiles(dir, {
      "job.yaml": `name: ci
model: { provider: scripted, script: ./replies.yaml }
prompt: Look around.
tools:
  shell: {}
`,
      "replies.yaml": `- tool_calls: [{ name: shell, arguments: { command: ${JSON.stringify(command)} } }]
- content: Done.
`,
      "home/.gitconfig": `[user]
\tname = Test User
[url "https://x-access-token:ghs_HOMETOKEN0001@github.com/"]
\tinsteadOf = https://github.com/
`,
      "runner/.credentials_rsaparams": '{"d": "RSAPARAMS0002"}\n',
      "runner/.credentials": '{"scheme": "OAuth", "data": {"clientId": "CLIENTID0003"}}\n',
      "runner/.runner": '{"agentName": "RUNNERNAME0004"}\n',
      "runner/_work/_temp/_runner_file_commands/set_env_1": "DEPLOY_KEY=ENVFILE0005\n",
      "runner/_work/other/other/.git/config": `[core]
\tbare = false
[http "https://github.com/"]
\textraheader = AUTHORIZATION: basic SIBLING0006
`,
      "runner/_work/other/other/README": "the other checkout\n",
    });
    const run = await hermes(["run", "job.yaml", "--output", "stream-json"], {
      cwd: dir,
      home: `${dir}/hermes-home`,
      env: {
        HOME: `${dir}/home`,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        RUNNER_TEMP: `${work}/_temp`,
        RUNNER_WORKSPACE: `${work}/ci`,
        GITHUB_ACTIONS: "true",
      },
    });
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
    const output = String(events.find((e) => e.type === "tool.result")?.content ?? "");
    for (
      const secret of [
        "HOMETOKEN0001",
        "RSAPARAMS0002",
        "CLIENTID0003",
        "RUNNERNAME0004",
        "ENVFILE0005",
        "SIBLING0006",
      ]
    ) {
      assert.equal(output.includes(secret), false, `${secret} is readable:\n${output}`);
    }
    assert.match(output, /name = Test User/);
    assert.match(output, /user\.name=Test User/, "git still reads the global config");
    assert.match(output, /insteadof=https:\/\/github\.com\//i);
    assert.match(output, /bare = false/);
    assert.match(output, /the other checkout/);
  },
});
