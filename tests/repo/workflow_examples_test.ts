/**
 * examples/workflows/: each workflow uses the action with inputs it has and reads outputs it sets, and the
 * job files they run validate (the workflows themselves are skipped by `validate DIR`, not taken for jobs).
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { hermes, ROOT } from "../_testing/cli.ts";

const DIR = `${ROOT}/examples/workflows`;

interface Workflow {
  on: unknown;
  jobs: Record<string, { steps: { id?: string; uses?: string; with?: Record<string, string> }[] }>;
}

Deno.test("workflow examples: the action's inputs and outputs they use exist; their job files validate", async () => {
  const action = parse(await Deno.readTextFile(`${ROOT}/action.yml`)) as {
    inputs: Record<string, unknown>;
    outputs: Record<string, unknown>;
  };
  const names = [...Deno.readDirSync(DIR)].map((e) => e.name).filter((n) => n.endsWith(".yml")).sort();
  assert.deepEqual(names, ["pr-triage.yml", "resume.yml", "scheduled.yml"]);
  const jobFiles = new Set<string>();
  for (const name of names) {
    const text = await Deno.readTextFile(`${DIR}/${name}`);
    const workflow = parse(text) as Workflow;
    assert.ok(workflow.on, `${name}: a trigger`);
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const uses = steps.filter((step) => step.uses?.startsWith("hermes/hermes@"));
    assert.equal(uses.length, 1, `${name}: one step uses the action`);
    for (const key of Object.keys(uses[0]!.with ?? {})) {
      assert.ok(key in action.inputs, `${name}: input ${key}`);
    }
    for (const [, output] of text.matchAll(/steps\.hermes\.outputs\.(\w+)/g)) {
      assert.ok(output! in action.outputs, `${name}: output ${output}`);
    }
    const job = uses[0]!.with?.job;
    if (job) jobFiles.add(job.replace(/^\.github\/hermes\//, ""));
  }
  assert.deepEqual([...jobFiles].sort(), ["nightly-report.yaml", "triage.yaml"]);
  assert.match(await Deno.readTextFile(`${DIR}/scheduled.yml`), /^\s+schedule:\n\s+- cron: /m);
  assert.match(await Deno.readTextFile(`${DIR}/pr-triage.yml`), /gh pr comment/);
  assert.match(await Deno.readTextFile(`${DIR}/resume.yml`), /^\s+resume: \$\{\{ inputs\.session \}\}$/m);
  const { code, stdout, stderr } = await hermes(["validate", DIR]);
  assert.equal(code, 0, stderr);
  for (const file of jobFiles) assert.match(stdout, new RegExp(`${file}: ok`));
  for (const name of names) assert.match(stderr, new RegExp(`skipped \\S*${name}: not a job file`));
});
