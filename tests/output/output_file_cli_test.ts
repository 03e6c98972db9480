/**
 * `output.file` after templating must resolve inside the job directory or a write root the job
 * grants, else exit 2 before any model call; a symlink does not carry it out. Real CLI, scripted model.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";

const JOB = (extra = "") =>
  `name: outfile
model: { provider: scripted, script: ./r.yaml }
inputs: { branch: { type: string, required: true } }
prompt: go
output: { file: "./out/{{ inputs.branch }}.md" }
${extra}`;
const REPLIES = `- { content: the answer }\n`;

async function setUp(extra = "") {
  const root = await tempDir();
  const dir = `${root}/job`;
  await writeFiles(root, { "job/job.yaml": JOB(extra), "job/r.yaml": REPLIES, "job/out/.keep": "" });
  return { root, dir };
}

Deno.test("output.file templated outside the job directory is exit 2 before any model call", async () => {
  const { root, dir } = await setUp();
  const run = await hermes(["run", "job.yaml", "--input", "branch=../../x"], { cwd: dir, home: dir });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /output\.file/);
  assert.equal(run.stdout, "", "no answer: the model was never called");
  await assert.rejects(Deno.stat(`${root}/x.md`));
  await assert.rejects(Deno.stat(`${dir}/x.md`));

  const ok = await hermes(["run", "job.yaml", "--input", "branch=feature"], { cwd: dir, home: dir });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(await Deno.readTextFile(`${dir}/out/feature.md`), "the answer");
});

Deno.test("output.file through a symlink leaving the job directory is exit 2; a granted write root is fine", async () => {
  const { root, dir } = await setUp("tools:\n  write_file: { paths: [../shared] }\n");
  await Deno.mkdir(`${root}/elsewhere`);
  await Deno.symlink(`${root}/elsewhere`, `${dir}/out/link`);
  const escape = await hermes(["run", "job.yaml", "--input", "branch=link/x"], { cwd: dir, home: dir });
  assert.equal(escape.code, 2, escape.stderr);
  assert.match(escape.stderr, /output\.file "\.\/out\/link\/x\.md": it resolves outside the job directory/);
  await assert.rejects(Deno.stat(`${root}/elsewhere/x.md`));

  await Deno.mkdir(`${root}/shared`);
  const granted = await hermes(["run", "job.yaml", "--input", "branch=../../shared/y"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(granted.code, 0, granted.stderr);
  assert.equal(await Deno.readTextFile(`${root}/shared/y.md`), "the answer");
});
