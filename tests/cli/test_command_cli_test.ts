/**
 * `hermes test` through the real CLI: a folder of passing and failing cases (output schema, a forbidden
 * tool, cost over its bound, a missing file, a replayed cassette), each reporter, JUnit XML read by a
 * third-party parser (junit2json, over xml2js), GitHub annotations and step summary, invalid case files.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

const JOB = `name: triage
model: { name: gpt-4.1-mini }
prompt: Label the notes in notes.txt
tools:
  read_file: { paths: ["."] }
  list_dir: { paths: ["."] }
  write_file: { paths: ["./out"] }
output:
  schema: { type: object, required: [labels], properties: { labels: { type: array, items: { type: string } } } }
`;

const CASES: Record<string, string> = {
  "cases/pass.test.yaml": `job: ../job/job.yaml
replies:
  - tool_calls: [{ name: read_file, arguments: { path: notes.txt } }]
  - tool_calls: [{ name: write_file, arguments: { path: out/labels.md, content: "bug\\n" } }]
  - content: '{"labels": ["bug"]}'
expect:
  status: success
  output: { match: { labels: [bug] } }
  tools_called: { ordered: true, calls: [read_file, { tool: write_file, args: { path: "^out/" } }] }
  tools_not_called: [list_dir]
  max_steps: 3
  max_cost_usd: 0.01
  final_contains: bug
  files:
    out/labels.md: { contains: bug }
`,
  "cases/schema.test.yaml": `job: ../job/job.yaml
replies:
  - content: '{"labels": ["bug"]}'
expect:
  output:
    schema: { type: object, required: [labels, priority] }
`,
  "cases/forbidden.test.yaml": `name: "forbidden, tool: list_dir 100%"
job: ../job/job.yaml
replies:
  - tool_calls: [{ name: list_dir, arguments: { path: "." } }]
  - content: '{"labels": []}'
expect:
  tools_not_called: [list_dir]
`,
  "cases/cost.test.yaml": `job: ../job/job.yaml
replies:
  - content: '{"labels": []}'
    usage: { prompt_tokens: 1000000, completion_tokens: 1000 }
expect:
  max_cost_usd: 0.01
`,
  "cases/missing.test.yaml": `job: ../job/job.yaml
replies:
  - content: '{"labels": []}'
expect:
  files:
    out/labels.md: { exists: true }
`,
};

const VERDICTS = { cost: false, forbidden: false, missing: false, pass: true, schema: false };

async function folder(): Promise<string> {
  return await writeFiles(await tempDir(), {
    "job/job.yaml": JOB,
    "job/notes.txt": "the build is broken\n",
    "job/out/.keep": "",
    ...CASES,
  });
}

const JUNIT_PARSER = "npm:junit2json@4.0.0";
const TOOLS_LOCK = new URL("../_testing/npm_tools.lock", import.meta.url).pathname;

/** The XML as junit2json (a third-party JUnit parser, pinned in tests/_testing/npm_tools.lock) reads it. */
async function parseJUnit(dir: string, xml: string): Promise<Record<string, unknown>> {
  await writeFiles(dir, {
    "report.xml": xml,
    "parse.ts": `import { parse } from "${JUNIT_PARSER}";\n` +
      `console.log(JSON.stringify(await parse(await Deno.readTextFile(Deno.args[0]))));\n`,
  });
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-config",
      `--lock=${TOOLS_LOCK}`,
      "--frozen",
      `${dir}/parse.ts`,
      `${dir}/report.xml`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(code, 0, decoder.decode(stderr));
  return JSON.parse(decoder.decode(stdout));
}

Deno.test("hermes test: each case gets its verdict, the failures say expected, actual and where; exit 1", async () => {
  const dir = await folder();
  const run = await hermes(["test", "cases", "--reporter", "json"], { cwd: dir, home: dir });
  assert.equal(run.code, 1, run.stderr);
  const report = JSON.parse(run.stdout);
  assert.equal(report.passed, 1);
  assert.equal(report.failed, 4);
  const byFile = Object.fromEntries(
    report.cases.map((c: { file: string }) => [c.file.replace(/^cases\/|\.test\.yaml$/g, ""), c]),
  );
  for (const [name, passed] of Object.entries(VERDICTS)) assert.equal(byFile[name].passed, passed, name);
  const only = (name: string) => {
    assert.equal(byFile[name].failures.length, 1, JSON.stringify(byFile[name].failures));
    return byFile[name].failures[0];
  };
  assert.deepEqual(only("schema"), {
    expectation: "expect.output.schema",
    line: 6,
    expected: "output meeting the schema",
    actual: `(root): must have required property 'priority': {"labels":["bug"]}`,
    where: "result.output",
  });
  const forbidden = only("forbidden");
  assert.equal(forbidden.expectation, "expect.tools_not_called[0]");
  assert.equal(forbidden.line, 7);
  assert.match(forbidden.actual, /^list_dir \{"path":"\."\} \(step 1\)$/);
  assert.match(forbidden.where, /^step 1, event \d+ \(tool\.call\)$/);
  assert.match(only("cost").actual, /^\$0\.40/);
  assert.equal(only("cost").expectation, "expect.max_cost_usd");
  assert.deepEqual(only("missing"), {
    expectation: "expect.files.out/labels.md.exists",
    line: 6,
    expected: "the file exists",
    actual: "no such file",
    where: "file out/labels.md in the job's folder",
  });
  // Each case ran in its own copy: the passing case's write is not in the job's folder.
  await assert.rejects(Deno.stat(`${dir}/job/out/labels.md`));
  // Four at a time gives the same verdicts.
  const parallel = await hermes(["test", "cases", "--reporter", "json", "--jobs", "4"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(parallel.code, 1, parallel.stderr);
  assert.deepEqual(
    JSON.parse(parallel.stdout).cases.map((c: { passed: boolean }) => c.passed),
    report.cases.map((c: { passed: boolean }) => c.passed),
  );
});

Deno.test("hermes test: JUnit XML a third-party parser reads; TAP; a text table", async () => {
  const dir = await folder();
  const junit = await hermes(["test", "cases", "--reporter", "junit", "--report-file", "junit.xml"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(junit.code, 1, junit.stderr);
  assert.match(junit.stdout, /^FAIL +cost /m, "the text summary goes to stdout");
  const parsed = await parseJUnit(dir, await Deno.readTextFile(`${dir}/junit.xml`)) as {
    tests: number;
    failures: number;
    testsuite: { testcase: { name: string; failure?: { message: string; inner: string }[] }[] }[];
  };
  assert.equal(parsed.tests, 5);
  assert.equal(parsed.failures, 4);
  const cases = parsed.testsuite[0]!.testcase;
  assert.deepEqual(cases.map((c) => [c.name, c.failure === undefined]), [
    ["cost", false],
    ["forbidden, tool: list_dir 100%", false],
    ["missing", false],
    ["pass", true],
    ["schema", false],
  ]);
  assert.match(
    cases[1]!.failure![0]!.message,
    /^expect\.tools_not_called\[0\] \(cases\/forbidden\.test\.yaml:7\)/,
  );

  const tap = await hermes(["test", "cases/pass.test.yaml", "cases/cost.test.yaml", "--reporter", "tap"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(tap.code, 1, tap.stderr);
  const lines = tap.stdout.split("\n");
  assert.deepEqual(lines.slice(0, 4), [
    "TAP version 13",
    "1..2",
    "ok 1 - pass (cases/pass.test.yaml)",
    "not ok 2 - cost (cases/cost.test.yaml)",
  ]);
  const text = await hermes(["test", "cases/pass.test.yaml"], { cwd: dir, home: dir });
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /^PASS +pass +cases\/pass\.test\.yaml +\d+\.\d{3}s +success \(completed\), 3 steps$/m,
  );
  assert.match(text.stdout, /^1 passed, 0 failed$/m);
});

Deno.test("hermes test under GitHub Actions: escaped ::error annotations on the case file's line, a step summary", async () => {
  const dir = await folder();
  const summary = `${dir}/summary.md`;
  const run = await hermes(["test", "cases/forbidden.test.yaml", "cases/pass.test.yaml"], {
    cwd: dir,
    home: dir,
    env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary },
  });
  assert.equal(run.code, 1, run.stderr);
  const annotations = run.stderr.split("\n").filter((line) => line.startsWith("::error"));
  assert.deepEqual(annotations.length, 1, run.stderr);
  // `,` and `:` in a property and `%` anywhere are escaped, so the name cannot add or end a property.
  assert.match(
    annotations[0]!,
    /^::error file=cases\/forbidden\.test\.yaml,line=7,title=hermes test%3A forbidden%2C tool%3A list_dir 100%25::expect\.tools_not_called\[0\] /,
  );
  const written = await Deno.readTextFile(summary);
  assert.match(written, /^### hermes test: 1 passed, 1 failed$/m);
  assert.match(written, /\| ❌ \| forbidden, tool: list_dir 100% \| `cases\/forbidden\.test\.yaml` \|/);
});

Deno.test("hermes test: a case with a cassette replays it; a changed job fails the case with replay_diverged", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job/job.yaml": "name: notes\nmodel: { name: gpt-4.1-mini }\nprompt: Read notes.txt\n" +
      'tools:\n  read_file: { paths: ["."] }\n',
    "job/notes.txt": "remember the milk\n",
    "rec/job.yaml": "name: notes\nmodel: { provider: scripted, name: gpt-4.1-mini, script: replies.yaml }\n" +
      'prompt: Read notes.txt\ntools:\n  read_file: { paths: ["."] }\n',
    "rec/notes.txt": "remember the milk\n",
    "rec/replies.yaml":
      '- tool_calls: [{ name: read_file, arguments: { path: notes.txt } }]\n- content: "milk"\n',
    "replayed.test.yaml": "job: job/job.yaml\ncassette: run.json\nexpect:\n  final_contains: milk\n" +
      "  tools_called: [read_file]\n",
  });
  const recorded = await hermes(["run", "rec/job.yaml", "--record", "run.json"], { cwd: dir, home: dir });
  assert.equal(recorded.code, 0, recorded.stderr);
  const pass = await hermes(["test", "replayed.test.yaml", "--reporter", "json"], { cwd: dir, home: dir });
  assert.equal(pass.code, 0, pass.stderr + pass.stdout);
  await Deno.writeTextFile(
    `${dir}/job/job.yaml`,
    (await Deno.readTextFile(`${dir}/job/job.yaml`)).replace("Read", "Open"),
  );
  const diverged = await hermes(["test", "replayed.test.yaml", "--reporter", "json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(diverged.code, 1, diverged.stderr);
  const [failure] = JSON.parse(diverged.stdout).cases[0].failures;
  assert.equal(failure.expectation, "expect.status");
  assert.match(failure.where, /replay_diverged: replay diverged: model call 1: message 1 \(user\) content/);
});

Deno.test("hermes test: invalid case files are exit 2 with file:line:col; flags checked", async () => {
  const dir = await writeFiles(await tempDir(), {
    "a.test.yaml": "job: job.yaml\nreplies: []\nexpect:\n  exit_cod: 0\n",
    "b.test.yaml": "job: job.yaml\nexpect: {}\n",
    "c.test.yaml": "job: job.yaml\nreplies: [{ content: hi }]\nexpect:\n  max_steps: -1\n",
  });
  const run = await hermes(["test", "."], { cwd: dir, home: dir });
  assert.equal(run.code, 2);
  assert.equal(run.stdout, "");
  assert.match(
    run.stderr,
    /^hermes: a\.test\.yaml:4:3: unknown key "expect\.exit_cod" \(did you mean "exit_code"\?\)$/m,
  );
  assert.match(run.stderr, /^hermes: b\.test\.yaml:1:1: the case has neither cassette: nor replies:/m);
  assert.match(run.stderr, /^hermes: c\.test\.yaml:4:14: expect\.max_steps: /m);
  const reporter = await hermes(["test", "--reporter", "xml"], { cwd: dir, home: dir });
  assert.equal(reporter.code, 2);
  assert.match(reporter.stderr, /invalid --reporter "xml": expected text, junit, json, tap/);
  const none = await hermes(["test", "nowhere"], { cwd: dir, home: dir });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /Cannot read "nowhere"/);
});

Deno.test("hermes test --update re-records a case's cassette against the job's model; --live --repeat reports pass rates", async () => {
  const server = await startOpenAIServer({
    respond: () => ({ content: server.requests.length % 2 === 1 ? "yes" : "no" }),
  });
  try {
    const dir = await writeFiles(await tempDir(), {
      "job/job.yaml":
        `name: ask\nmodel: { name: gpt-4.1-mini, base_url: "${server.url}", api_key_env: none }\n` +
        "prompt: answer\n",
      "ask.test.yaml": "job: job/job.yaml\ncassette: ask.cassette.json\nexpect:\n  final_contains: yes\n" +
        "pass_rate: 0.5\n",
    });
    const update = await hermes(["test", "--update", "--reporter", "json"], { cwd: dir, home: dir });
    assert.equal(update.code, 0, update.stderr + update.stdout);
    assert.equal(server.requests.length, 1);
    const cassette = JSON.parse(await Deno.readTextFile(`${dir}/ask.cassette.json`));
    assert.equal(cassette.exchanges[0].response.message.content, "yes");
    const offline = await hermes(["test"], { cwd: dir, home: dir });
    assert.equal(offline.code, 0, offline.stderr + offline.stdout);
    assert.equal(server.requests.length, 1, "offline cases call no model");
    // Live: the model answers yes, no, yes, no: a rate of 0.5 meets pass_rate 0.5.
    const live = await hermes(["test", "--live", "--repeat", "4", "--reporter", "json"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(live.code, 0, live.stderr + live.stdout);
    const [result] = JSON.parse(live.stdout).cases;
    assert.deepEqual([result.runs, result.pass_rate, result.required], [4, 0.5, 0.5]);
    assert.equal(server.requests.length, 5);
    await Deno.writeTextFile(
      `${dir}/ask.test.yaml`,
      (await Deno.readTextFile(`${dir}/ask.test.yaml`)).replace("0.5", "0.8"),
    );
    const strict = await hermes(["test", "--live", "--repeat", "2", "--reporter", "json"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(strict.code, 1, strict.stderr);
    assert.equal(JSON.parse(strict.stdout).cases[0].pass_rate, 0.5);
  } finally {
    await server.close();
  }
});

Deno.test("hermes test --live --max-budget-usd: a run is capped by what is left, and cases after it is spent are not started", async () => {
  const server = await startOpenAIServer({
    respond: () => ({ content: "ok", usage: { prompt_tokens: 100_000, completion_tokens: 10 } }),
  });
  try {
    const job =
      `name: spend\nmodel: { name: gpt-4.1-mini, base_url: "${server.url}", api_key_env: none }\nprompt: go\n`;
    const dir = await writeFiles(await tempDir(), {
      "job/job.yaml": job,
      "a.test.yaml": "job: job/job.yaml\n",
      "b.test.yaml": "job: job/job.yaml\n",
    });
    const run = await hermes(["test", "--live", "--max-budget-usd", "0.01", "--reporter", "json"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(run.code, 1, run.stderr);
    const [a, b] = JSON.parse(run.stdout).cases;
    // The first reply alone ($0.04) passes the budget: its run ends at the cap (limits.max_cost_usd).
    assert.equal(a.result.terminal_reason, "max_cost");
    assert.equal(b.result, null);
    assert.match(b.failures[0].actual, /^not run: --max-budget-usd 0\.01 spent/);
    assert.equal(server.requests.length, 1);
  } finally {
    await server.close();
  }
});
