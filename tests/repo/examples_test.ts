/** Every example job runs through the real CLI (copied to a temp dir so the checkout stays clean). */
import assert from "node:assert/strict";
import { hermes, ROOT, tempDir } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

async function copyExamples(): Promise<string> {
  const dir = await tempDir("hermes-examples-");
  for await (const entry of Deno.readDir(`${ROOT}/examples`)) {
    if (entry.isFile) await Deno.copyFile(`${ROOT}/examples/${entry.name}`, `${dir}/${entry.name}`);
  }
  return dir;
}

Deno.test("examples/hello.yaml calls a tool and prints the answer, without needing the OS sandbox", async () => {
  const dir = await copyExamples();
  // The README's demo must run on a machine without bubblewrap: no bwrap is reachable here.
  const { code, stdout, stderr } = await hermes(["run", `${dir}/hello.yaml`], {
    home: dir,
    env: { HERMES_BWRAP: `${dir}/no-bwrap-here`, PATH: "/nonexistent" },
  });
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^Hello!/);
  assert.match(stderr, /tool list_dir/);
});

Deno.test({
  name: "examples/repo-report.yaml reads, writes a report and returns structured output",
  ignore: withoutSandbox,
}, async () => {
  const dir = await copyExamples();
  const { code, stdout, stderr } = await hermes(["run", `${dir}/repo-report.yaml`, "--output", "json"], {
    home: dir,
  });
  assert.equal(code, 0, stderr);
  const result = JSON.parse(stdout);
  assert.deepEqual(result.output, {
    files: 2,
    has_readme: false,
    summary: "Two example job files; report written to out/report.md.",
  });
  assert.match(await Deno.readTextFile(`${dir}/out/report.md`), /^# Repository report/);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/out/report.json`)), result.output);
});

Deno.test("examples/watch.yaml keeps running its loop until LOOP_COMPLETE", async () => {
  const dir = await copyExamples();
  const { code, stdout, stderr } = await hermes(["run", `${dir}/watch.yaml`, "--output", "json"], {
    home: dir,
  });
  assert.equal(code, 0, stderr);
  const result = JSON.parse(stdout);
  assert.equal(result.terminal_reason, "loop_done");
  assert.match(result.final, /^CI is green/);
});

Deno.test("examples/scheduled.yaml is picked up by the daemon with its next weekday slot", async () => {
  const dir = await copyExamples();
  const { code, stdout, stderr } = await hermes(["daemon", "status", `${dir}/scheduled.yaml`, "--json"], {
    home: dir,
  });
  assert.equal(code, 0, stderr);
  const [job] = JSON.parse(stdout).jobs;
  assert.equal(job.name, "weekday-digest");
  const next = new Date(job.next_slot);
  assert.ok(next.getTime() > Date.now());
  assert.ok(next.getUTCDay() >= 1 && next.getUTCDay() <= 5, `a weekday: ${job.next_slot}`);
});

Deno.test("hermes validate accepts every example and hermes schema prints JSON Schema", async () => {
  const files = ["hello", "repo-report", "watch", "scheduled"].map((name) => `${ROOT}/examples/${name}.yaml`);
  const validate = await hermes(["validate", ...files]);
  assert.equal(validate.code, 0, validate.stderr);
  const schema = JSON.parse((await hermes(["schema"])).stdout);
  assert.equal(schema.type, "object");
  assert.ok(schema.properties.prompt && schema.properties.tools && schema.required.includes("name"));
  assert.equal(schema.additionalProperties, false);
});

Deno.test("examples/triage: its test cases pass offline; a changed prompt fails the recorded case at the first divergence", async () => {
  const home = await tempDir();
  const run = await hermes(["test", "examples/triage", "--reporter", "junit"], { home });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  assert.match(run.stdout, /<testsuites name="hermes test" tests="2" failures="0"/);
  // The checkout stays clean: each case wrote into its own copy of the job's folder.
  await assert.rejects(Deno.stat(`${ROOT}/examples/triage/out/labels.md`));

  const copy = await tempDir("hermes-triage-");
  await new Deno.Command("cp", { args: ["-r", `${ROOT}/examples/triage/.`, copy] }).output();
  const job = `${copy}/job.yaml`;
  await Deno.writeTextFile(job, (await Deno.readTextFile(job)).replace("Read report.md", "Read the report"));
  const changed = await hermes(["test", copy, "--reporter", "json"], { home });
  assert.equal(changed.code, 1, changed.stderr);
  const cases = JSON.parse(changed.stdout).cases;
  assert.deepEqual(cases.map((c: { passed: boolean }) => c.passed), [true, false]);
  assert.match(
    cases[1].failures[0].where,
    /replay_diverged: replay diverged: model call 1: message 2 \(user\) content/,
  );
});
