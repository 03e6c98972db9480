/**
 * CI plumbing (docs/github-actions.md): `hermes run` writes `GITHUB_OUTPUT` (session_id, status, exit_code, terminal_reason,
 * error, output as JSON, final), a step summary that says why a run failed, an `::error::` annotation with
 * `GITHUB_ACTIONS=true`; and an output file it cannot write fails the run with a result that says so.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";

const SCHEMA_JOB = "name: labels\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: labels please\n" +
  "output: { schema: { type: object, required: [labels], properties: { labels: { type: array } } } }\n";

/** Parses GITHUB_OUTPUT's `name=value` and `name<<DELIM … DELIM` forms. */
function parseOutputs(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^(\w+)<<(\S+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      values[heredoc[1]!] = lines.slice(i + 1, end).join("\n");
      i = end;
    } else if (line.includes("=")) {
      values[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
    }
  }
  return values;
}

Deno.test("github: a successful run writes every output, the structured output as JSON", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": SCHEMA_JOB,
    "r.yaml": `- content: '{"labels": ["bug"]}'\n`,
  });
  const env = { GITHUB_OUTPUT: `${dir}/out`, GITHUB_STEP_SUMMARY: `${dir}/summary`, GITHUB_ACTIONS: "true" };
  const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
    cwd: dir,
    home: dir,
    env,
  });
  assert.equal(code, 0, stderr);
  assert.equal(JSON.parse(stdout).exit_code, 0);
  const outputs = parseOutputs(await Deno.readTextFile(env.GITHUB_OUTPUT));
  assert.equal(outputs.status, "success");
  assert.equal(outputs.exit_code, "0");
  assert.equal(outputs.terminal_reason, "completed");
  assert.equal(outputs.error, "");
  assert.deepEqual(JSON.parse(outputs.output!), { labels: ["bug"] });
  assert.equal(outputs.final, '{"labels": ["bug"]}');
  assert.doesNotMatch(stderr, /::error/, "no annotation for a success");
  assert.doesNotMatch(await Deno.readTextFile(env.GITHUB_STEP_SUMMARY), /Terminal reason/);
});

Deno.test("github: a failed run puts its reason in the outputs, the summary and an ::error:: annotation", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": SCHEMA_JOB,
    "r.yaml": "- content: 'not json'\n- content: |-\n    still\n    not json\n",
  });
  const env = { GITHUB_OUTPUT: `${dir}/out`, GITHUB_STEP_SUMMARY: `${dir}/summary`, GITHUB_ACTIONS: "true" };
  const { code, stderr } = await hermes(["run", "job.yaml"], { cwd: dir, home: dir, env });
  assert.equal(code, 1);
  const outputs = parseOutputs(await Deno.readTextFile(env.GITHUB_OUTPUT));
  assert.equal(outputs.status, "failed");
  assert.equal(outputs.exit_code, "1");
  assert.equal(outputs.terminal_reason, "schema_mismatch");
  assert.match(outputs.error!, /does not match output.schema/);
  assert.equal(outputs.output, "null");
  assert.equal(outputs.final, "still\nnot json", "a multi-line value uses the heredoc form");
  const summary = await Deno.readTextFile(env.GITHUB_STEP_SUMMARY);
  assert.match(summary, /\*\*Status:\*\* failed/);
  assert.match(summary, /\*\*Terminal reason:\*\* `schema_mismatch`/);
  assert.match(summary, /\*\*Error:\*\* The final answer does not match output.schema/);
  assert.match(
    stderr,
    /^::error title=Hermes labels::failed \(schema_mismatch\): The final answer does not match/m,
  );
  // Without GITHUB_ACTIONS=true there is no annotation.
  const plain = await hermes(["run", "job.yaml"], {
    cwd: dir,
    home: dir,
    env: { GITHUB_OUTPUT: `${dir}/out2` },
  });
  assert.equal(plain.code, 1);
  assert.doesNotMatch(plain.stderr, /::error/);
});

Deno.test("github: an unwritable GITHUB_OUTPUT fails the run, and stdout, events and exit code all say so", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": SCHEMA_JOB,
    "r.yaml": `- content: '{"labels": []}'\n`,
  });
  const env = { GITHUB_OUTPUT: dir }; // a directory: cannot be appended to
  const json = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
  assert.equal(json.code, 1);
  const result = JSON.parse(json.stdout);
  assert.equal(result.exit_code, 1);
  assert.equal(result.status, "failed");
  assert.equal(result.terminal_reason, "ci_output_error");
  assert.match(result.error, /Cannot write the step outputs to GITHUB_OUTPUT/);
  assert.match(json.stderr, /Cannot write the step outputs/);
  await Deno.writeTextFile(`${dir}/r.yaml`, `- content: '{"labels": []}'\n`);
  const stream = await runEvents(dir, { env });
  assert.equal(stream.code, 1);
  const last = stream.events.at(-1)!;
  assert.equal(last.type, "result");
  assert.equal(last.exit_code, 1);
  const end = stream.events.find((e) => e.type === "session.end")!;
  assert.equal(end.status, "failed", "the stored session ends as reported");
});

Deno.test("github: an unwritable step summary is a warning; the run keeps its exit 0", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": SCHEMA_JOB,
    "r.yaml": `- content: '{"labels": []}'\n`,
  });
  const env = { GITHUB_OUTPUT: `${dir}/out`, GITHUB_STEP_SUMMARY: dir };
  const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
    cwd: dir,
    home: dir,
    env,
  });
  assert.equal(code, 0, stderr);
  assert.equal(JSON.parse(stdout).exit_code, 0);
  assert.match(stderr, /warning: cannot write GITHUB_STEP_SUMMARY/);
});

Deno.test("run: an output.file that cannot be written fails the run with a result that says so", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml":
      "name: f\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\noutput: { file: ./blocker/x.txt }\n",
    "r.yaml": "- content: hello\n",
    "blocker": "a file where a directory is needed\n",
  });
  const { code, stdout } = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(code, 1);
  const result = JSON.parse(stdout);
  assert.equal(result.exit_code, 1);
  assert.equal(result.terminal_reason, "output_file_error");
  assert.match(result.error, /Cannot write output.file .*blocker\/x\.txt/);
});
