/**
 * `env:` values (docs/job-file.md) take `{{ env.X }}` and `{{ inputs.x }}`, so a job can pass the runner's token to
 * its tools (`GH_TOKEN: "{{ env.GH_TOKEN }}"`); the stored session keeps the templates, not the secret, and
 * `--resume` renders them again. Real CLI, scripted model, the shell tool reading its environment.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const JOB = `name: envjob
model: { provider: scripted, script: ./r.yaml }
inputs: { label: { type: string, default: plain } }
env:
  GH_TOKEN: "{{ env.GH_TOKEN }}"
  LABEL: "label-{{ inputs.label }}"
  FIXED: as written
tools:
  shell: { allow: ["printenv *"], timeout: 10s }
`;
const REPLIES =
  `- { match: show, tool_calls: [{ name: shell, arguments: { command: "printenv LABEL FIXED GH_TOKEN" } }] }
- { match: show, content: shown }
- { match: again, tool_calls: [{ name: shell, arguments: { command: "printenv GH_TOKEN" } }] }
- { match: again, content: shown again }
`;
const TOKEN = "ghp_secret_value_1234";

async function toolOutputs(dir: string, args: string[], env: Record<string, string>) {
  const { code, stdout, stderr } = await hermes(["run", ...args, "--output", "stream-json"], {
    cwd: dir,
    home: dir,
    env,
  });
  const events = stdout.trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  return {
    code,
    stderr,
    events,
    outputs: events.filter((e) => e.type === "tool.result").map((e) => e.content),
  };
}

Deno.test({
  name: "job env: {{ env.X }} and {{ inputs.x }} are substituted for tools; the store keeps the templates",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), { "job.yaml": JOB, "r.yaml": REPLIES });
  const first = await toolOutputs(dir, ["job.yaml", "-p", "show", "--input", "label=ci"], {
    GH_TOKEN: TOKEN,
  });
  assert.equal(first.code, 0, first.stderr);
  // The token reached the tool (printed redacted, as every secret value is); literal text stays literal.
  assert.match(first.outputs[0], /^label-ci\nas written\n\[REDACTED:GH_TOKEN\]/);
  assert.doesNotMatch(first.outputs[0], /\{\{/);
  const id = first.events.at(-1).session_id;
  const db = await Deno.readFile(`${dir}/state.db`);
  const raw = new TextDecoder().decode(db);
  assert.match(raw, /\{\{ env\.GH_TOKEN \}\}/, "the session row keeps the template");
  // --resume renders the templates again from its own environment.
  const again = await toolOutputs(dir, ["--resume", id, "-p", "again"], { GH_TOKEN: "ghp_other_token_5678" });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.outputs[0], /^\[REDACTED:GH_TOKEN\]/);
});

Deno.test("job env: a reference to an unset variable or an unknown input is exit 2 with its location", async () => {
  const dir = await writeFiles(await tempDir(), { "job.yaml": JOB, "r.yaml": REPLIES });
  const unset = await hermes(["run", "job.yaml", "-p", "show"], { cwd: dir, home: dir });
  assert.equal(unset.code, 2);
  assert.match(
    unset.stderr,
    /job\.yaml:5:\d+.*unknown template reference "\{\{ env\.GH_TOKEN \}\}" \(not set\)/,
  );
  await Deno.writeTextFile(`${dir}/bad.yaml`, JOB.replace("{{ inputs.label }}", "{{ inputs.nope }}"));
  const validate = await hermes(["validate", "bad.yaml"], { cwd: dir, home: dir });
  assert.equal(validate.code, 2);
  assert.match(validate.stderr, /bad\.yaml:6:\d+.*inputs\.nope/);
  const good = await hermes(["validate", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(good.code, 0, good.stderr);
});
