/**
 * `hermes submit` and `hermes runs` through the real CLI on a SQLite store: submit validates as run does
 * (exit 2, one located line, nothing queued), a key submits once, `runs wait` exits with the run's exit code
 * and prints its result object, `runs events` prints its events, a cancel reaches a queued run at once and a
 * running one through its worker.
 */
import assert from "node:assert/strict";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";

const JOB = `name: q
model: { provider: scripted, script: ./replies.yaml }
inputs: { repo: { type: string, required: true } }
concurrency: { group: "repo-{{ inputs.repo }}", limit: 2 }
prompt: look at {{ inputs.repo }}
`;

async function setup(files: Record<string, string> = {}): Promise<{ dir: string; cli: typeof hermes }> {
  const dir = await writeFiles(await tempDir("hermes-submit-"), {
    "job.yaml": JOB,
    "replies.yaml": "- content: looked\n",
    ...files,
  });
  const cli: typeof hermes = (args, options = {}) =>
    hermes(args, { cwd: dir, home: `${dir}/home`, ...options });
  return { dir, cli };
}

async function queued(cli: typeof hermes): Promise<unknown[]> {
  const list = await cli(["runs", "list", "--json"]);
  assert.equal(list.code, 0, list.stderr);
  return JSON.parse(list.stdout);
}

Deno.test("submit: bad input is one located line, exit 2, and nothing is queued", async () => {
  const { dir, cli } = await setup({
    "zero.yaml": JOB.replace("limit: 2", "limit: 0"),
    "missing.yaml": JOB.replace("repo-{{ inputs.repo }}", "repo-{{ inputs.branch }}"),
    "typo.yaml": JOB.replace("concurrency:", "concurency:"),
  });
  const cases: [string[], RegExp][] = [
    [["submit", "zero.yaml", "--input", "repo=a"], /zero\.yaml:4:\d+.*concurrency\.limit/],
    [["submit", "missing.yaml", "--input", "repo=a"], /missing\.yaml:4:\d+.*inputs\.branch.*missing input/],
    [["submit", "typo.yaml", "--input", "repo=a"], /typo\.yaml:4:1.*concurency/],
    [["submit", "job.yaml"], /repo/],
    [["submit", "job.yaml", "--input", "repo=a", "--not-before", "soon"], /--not-before "soon"/],
    [["submit", "job.yaml", "--input", "repo=a", "--priority", "high"], /--priority "high"/],
    [["runs", "show", "r-none"], /Cannot find run "r-none"/],
    [["runs", "cancel", "r-none"], /Cannot find run "r-none"/],
  ];
  for (const [args, message] of cases) {
    const out = await cli(args);
    assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    assert.match(out.stderr, message);
    assert.equal(out.stderr.trim().split("\n").length, 1, out.stderr);
  }
  assert.deepEqual(await queued(cli), []);
  // The allowed neighbours are queued.
  const good = await cli([
    "submit",
    "job.yaml",
    "--input",
    "repo=a",
    "--not-before",
    "10m",
    "--priority",
    "2",
  ]);
  assert.equal(good.code, 0, good.stderr);
  assert.match(good.stdout, /^r\d{8}-\d{6}-[0-9a-f]+\n$/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("submit: the same --key returns the first run; runs show names its group and why it waits", async () => {
  const { dir, cli } = await setup();
  const first = await cli(["submit", "job.yaml", "--input", "repo=a", "--key", "k", "--output", "json"]);
  assert.equal(first.code, 0, first.stderr);
  const submitted = JSON.parse(first.stdout);
  assert.equal(submitted.status, "queued");
  assert.equal(submitted.deduplicated, false);
  const again = await cli(["submit", "job.yaml", "--input", "repo=b", "--key", "k", "--output", "json"]);
  assert.deepEqual(JSON.parse(again.stdout), { ...submitted, deduplicated: true });
  const show = await cli(["runs", "show", submitted.run_id, "--json"]);
  const run = JSON.parse(show.stdout);
  assert.equal(run.group, "repo-a");
  assert.equal(run.group_limit, 2);
  assert.deepEqual(run.inputs, { repo: "a" });
  assert.equal(run.waiting, "for a free worker");
  assert.equal(run.job_snapshot, undefined);
  // The job file may change afterwards: the run keeps the job as submitted.
  await Deno.writeTextFile(`${dir}/job.yaml`, JOB.replace("look at", "ignore"));
  const daemon = spawnHermes(["daemon"], { cwd: dir, home: `${dir}/home` });
  const wait = await cli(["runs", "wait", submitted.run_id.slice(0, 18), "--output", "json"]);
  daemon.kill("SIGTERM");
  const stopped = await daemon.output();
  assert.equal(stopped.code, 0, new TextDecoder().decode(stopped.stderr));
  assert.equal(wait.code, 0, wait.stderr);
  const result = JSON.parse(wait.stdout);
  assert.equal(result.type, "result");
  assert.equal(result.status, "success");
  assert.equal(result.final, "looked");
  const events = (await cli(["runs", "events", submitted.run_id])).stdout.trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  assert.equal(events[0].type, "session.start");
  assert.equal(events.find((e) => e.type === "message" && e.role === "user").content, "look at a");
  assert.equal(events.at(-1).type, "result");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("runs cancel: a queued run at once (wait exits 130); a running one is stopped by its worker", async () => {
  const { dir, cli } = await setup({ "slow.replies.yaml": "- content: late\n  delay: 60s\n" });
  await Deno.writeTextFile(
    `${dir}/slow.yaml`,
    JOB.replace("./replies.yaml", "./slow.replies.yaml").replace("name: q", "name: slow"),
  );
  const first = (await cli(["submit", "job.yaml", "--input", "repo=a"])).stdout.trim();
  const cancel = await cli(["runs", "cancel", first]);
  assert.equal(cancel.code, 0, cancel.stderr);
  assert.match(cancel.stdout, /cancelled/);
  const waited = await cli(["runs", "wait", first, "--output", "json"]);
  assert.equal(waited.code, 130);
  assert.equal(JSON.parse(waited.stdout).terminal_reason, "cancelled");

  const slow = (await cli(["submit", "slow.yaml", "--input", "repo=a"])).stdout.trim();
  const daemon = spawnHermes(["daemon"], { cwd: dir, home: `${dir}/home` });
  try {
    for (let i = 0; i < 600; i++) {
      const run = JSON.parse((await cli(["runs", "show", slow, "--json"])).stdout);
      if (run.status === "running" && run.session_id) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const asked = await cli(["runs", "cancel", slow]);
    assert.match(asked.stdout, /its worker is stopping it/);
    // Well before the model's 60 s answer: the worker stopped it.
    const ended = await cli(["runs", "wait", slow, "--output", "json", "--timeout", "30s"]);
    assert.equal(ended.code, 130, ended.stderr);
    const run = JSON.parse((await cli(["runs", "show", slow, "--json"])).stdout);
    assert.equal(run.status, "cancelled");
    assert.equal(run.note, "cancelled while it ran");
  } finally {
    daemon.kill("SIGTERM");
    await daemon.output();
  }
  await Deno.remove(dir, { recursive: true });
});
