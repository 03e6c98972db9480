import assert from "node:assert/strict";
import { relative } from "node:path";
import { ValidationError } from "../core/errors.ts";
import { parseInputFlags } from "./job.ts";
import { loadJob, loadUserConfig } from "./job_file.ts";

async function jobFile(yaml: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-job-" });
  await Deno.writeTextFile(`${dir}/job.yaml`, yaml);
  return `${dir}/job.yaml`;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ValidationError, `expected ValidationError, got ${error}`);
    return error.message;
  }
  assert.fail("expected an error");
}

Deno.test("a valid job loads with defaults, inputs and templates resolved", async () => {
  const path = await jobFile(
    `name: triage\ninputs:\n  repo: { type: string, required: true }\n  days: { type: number, default: 7 }\n` +
      `env: { GREETING: hi }\nprompt: "List {{ inputs.repo }} for {{ inputs.days }} days, {{ env.GREETING }}"\n` +
      `steps: ["Now {{ inputs.repo }}"]\n`,
  );
  const job = loadJob(path, { inputs: { repo: "a/b" }, env: {} });
  assert.equal(job.spec.prompt, "List a/b for 7 days, hi");
  assert.deepEqual(job.spec.steps, ["Now a/b"]);
  assert.deepEqual(job.inputs, { repo: "a/b", days: 7 });
  assert.equal(job.dir, path.replace(/\/job\.yaml$/, ""));
});

Deno.test("a job path given relative or with . and .. segments is stored absolute; dir is its directory", async () => {
  const path = await jobFile("name: x\nprompt: hi\n");
  const dir = path.replace(/\/job\.yaml$/, "");
  await Deno.mkdir(`${dir}/sub`);
  for (const given of [path, `${dir}/sub/.././/job.yaml`, relative(Deno.cwd(), path)]) {
    const job = loadJob(given);
    assert.equal(job.path, path, given);
    assert.equal(job.dir, dir, given);
  }
});

Deno.test("config.yaml plugins resolve against the config's directory, however its path is given", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-config-" });
  await Deno.mkdir(`${dir}/x`);
  await Deno.writeTextFile(
    `${dir}/config.yaml`,
    "plugins:\n  - path: ./audit.ts\n    permissions: { read: [data, /abs] }\n",
  );
  for (
    const given of [
      `${dir}/config.yaml`,
      `${dir}/x/../config.yaml`,
      relative(Deno.cwd(), `${dir}/config.yaml`),
    ]
  ) {
    const config = loadUserConfig(given);
    assert.deepEqual(config?.plugins, [{
      path: `${dir}/audit.ts`,
      permissions: { read: [`${dir}/data`, "/abs"] },
    }]);
  }
  assert.equal(loadUserConfig(`${dir}/missing.yaml`), undefined);
});

Deno.test("an unknown key names file:line:col, the key path and the nearest known key", async () => {
  const path = await jobFile(`name: x\nprompt: hi\ntools:\n  shell:\n    alow: ["git *"]\n`);
  assert.equal(
    errorOf(() => loadJob(path)),
    `${path}:5:5: unknown key "tools.shell.alow" (did you mean "allow"?)`,
  );
});

Deno.test("an unknown tool other agents name otherwise is pointed at Hermes's name (bash → shell)", async () => {
  const path = await jobFile(`name: x\nprompt: hi\ntools:\n  bash: {}\n`);
  assert.equal(errorOf(() => loadJob(path)), `${path}:4:3: unknown key "tools.bash" (did you mean "shell"?)`);
  const fetch = await jobFile(`name: x\nprompt: hi\ntools:\n  web_fetch: {}\n`);
  assert.match(
    errorOf(() => loadJob(fetch)),
    /unknown key "tools.web_fetch" \(did you mean "http_fetch"\?\)/,
  );
});

Deno.test("a wrong type names the position and key path", async () => {
  const path = await jobFile(`name: x\nprompt: hi\nlimits:\n  max_turns: many\n`);
  assert.match(errorOf(() => loadJob(path)), new RegExp(`^${path}:4:14: limits\\.max_turns: .*number`));
});

Deno.test("malformed YAML names the position", async () => {
  const path = await jobFile(`name: x\nprompt: [unclosed\n`);
  assert.match(errorOf(() => loadJob(path)), new RegExp(`^${path}:\\d+:\\d+: invalid YAML`));
});

Deno.test("missing required input, bad number and undeclared input are errors", async () => {
  const path = await jobFile(
    `name: x\ninputs:\n  repo: { required: true, description: owner/name }\n  n: { type: number }\nprompt: "{{ inputs.repo }}"\n`,
  );
  assert.match(errorOf(() => loadJob(path)), /Missing required input "repo" \(owner\/name\)/);
  assert.match(
    errorOf(() => loadJob(path, { inputs: { repo: "a", n: "lots" } })),
    /--input n=lots: expected a number/,
  );
  assert.match(errorOf(() => loadJob(path, { inputs: { repo: "a", nope: "1" } })), /invalid --input "nope"/);
  assert.equal(loadJob(path, { inputs: { repo: "a", n: "3" } }).inputs.n, 3);
});

Deno.test("an unknown template reference is an error, never an empty string", async () => {
  const path = await jobFile(`name: x\nprompt: |\n  hello {{ inputs.who }}\n`);
  assert.match(
    errorOf(() => loadJob(path)),
    new RegExp(`^${path}:2:9: unknown template reference "\\{\\{ inputs\\.who \\}\\}"`),
  );
  const envPath = await jobFile(`name: x\nprompt: "{{ env.NOT_SET_ANYWHERE }}"\n`);
  assert.match(errorOf(() => loadJob(envPath, { env: {} })), /unknown template reference.*not set/);
  assert.equal(loadJob(envPath, { env: { NOT_SET_ANYWHERE: "yes" } }).spec.prompt, "yes");
});

Deno.test("a missing job file is a ValidationError naming it", () => {
  assert.match(
    errorOf(() => loadJob("/nonexistent/job.yaml")),
    /Cannot read job file "\/nonexistent\/job\.yaml"/,
  );
});

Deno.test("--input flags need NAME=VALUE", () => {
  assert.deepEqual(parseInputFlags(["a=1", "b=x=y"]), { a: "1", b: "x=y" });
  assert.match(errorOf(() => parseInputFlags(["novalue"])), /expected NAME=VALUE/);
});

Deno.test("validate-only still rejects a reference to an undeclared input, but not to env", async () => {
  const bad = await jobFile(`name: x\nprompt: "{{ inputs.who }} {{ env.ANYTHING }}"\n`);
  assert.match(
    errorOf(() => loadJob(bad, { validateOnly: true })),
    /unknown template reference "\{\{ inputs\.who \}\}"/,
  );
  const good = await jobFile(
    `name: x\ninputs: { who: { required: true } }\nprompt: "{{ inputs.who }} {{ env.ANYTHING }}"\n`,
  );
  assert.equal(loadJob(good, { validateOnly: true }).spec.name, "x");
});
