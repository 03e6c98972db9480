/**
 * The GitHub Action (action.yml) run step by step through a runner emulation (tests/_testing/actions_runner.ts):
 * the install steps find deno and bubblewrap already here (or install deno through npx and warn about a missing
 * bubblewrap on a bare runner), doctor runs, and the job runs through the real
 * CLI — a success, a model failure (exit 1, a model server that answers 500) and a job-file error (exit 2),
 * each with the outputs and annotations it must write.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { ROOT, tempDir, writeFiles } from "../_testing/cli.ts";
import { runAction } from "../_testing/actions_runner.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

function runnerEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  return {
    PATH: `${dirname(Deno.execPath())}:${env.PATH ?? "/usr/bin:/bin"}`,
    HOME: env.HOME ?? "/tmp",
    ...(env.DENO_DIR ? { DENO_DIR: env.DENO_DIR } : {}),
    NO_COLOR: "1",
  };
}

const SCHEMA = "output: { schema: { type: object, required: [labels] }, file: ./out/labels.json }\n";

Deno.test("action: a successful job sets every output, writes the result file and the summary, annotates nothing", async () => {
  const dir = await writeFiles(await tempDir(), {
    "jobs/triage.yaml": "name: triage\nmodel: { provider: scripted, script: ./r.yaml }\n" +
      "inputs: { repo: { type: string, required: true } }\nprompt: Label {{ inputs.repo }}\n" + SCHEMA,
    "jobs/r.yaml": `- content: '{"labels": ["bug"]}'\n`,
    "jobs/out/.keep": "",
  });
  const run = await runAction({
    actionPath: ROOT,
    workspace: dir,
    with: { job: "jobs/triage.yaml", inputs: "repo=octo/cat\n\n# a comment\n", home: `${dir}/home` },
    env: runnerEnv(),
  });
  assert.equal(run.failed, null, run.log);
  assert.deepEqual(run.skipped, ["Cache Deno downloads"], "uses: steps are the only ones skipped");
  assert.match(run.log, /^sandbox\s+ok/m, "doctor ran");
  const { outputs } = run;
  assert.equal(outputs.status, "success");
  assert.equal(outputs.exit_code, "0");
  assert.equal(outputs.terminal_reason, "completed");
  assert.match(outputs.session_id!, /^\d{8}-\d{6}-[0-9a-f]{6}$/);
  assert.equal(outputs.final, '{"labels": ["bug"]}');
  assert.deepEqual(JSON.parse(outputs.output!), { labels: ["bug"] });
  assert.equal(outputs.output_file, `${dir}/jobs/out/labels.json`);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(outputs.output_file!)), { labels: ["bug"] });
  assert.equal(outputs.error, "");
  const result = JSON.parse(await Deno.readTextFile(outputs.result!));
  assert.equal(result.session_id, outputs.session_id);
  assert.equal(result.status, "success");
  assert.match(run.summary, /### Hermes: triage — success/);
  assert.match(run.summary, /1 turn, /, "one turn, not 1 turns");
  assert.doesNotMatch(run.log, /::error/);
  // The job's prompt got the input: the session is in the home the action was given.
  assert.ok((await Deno.stat(`${dir}/home/state.db`)).isFile);
});

Deno.test("action: a model failure is exit 1 with its reason in the outputs, the summary and an ::error:: annotation", async () => {
  const failure = { error: { status: 500, message: "model backend down" } };
  const server = await startOpenAIServer([failure, failure]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml":
        `name: remote\nmodel: { name: m, base_url: "${server.url}", api_key_env: none, max_retries: 1 }\n` +
        "prompt: hi\n",
    });
    const run = await runAction({
      actionPath: ROOT,
      workspace: dir,
      with: { job: "job.yaml", doctor: "false", args: "--max-turns 5" },
      env: runnerEnv(),
    });
    assert.deepEqual(run.failed, { step: "Run Hermes", code: 1 }, run.log);
    assert.equal(run.outputs.status, "failed");
    assert.equal(run.outputs.exit_code, "1");
    assert.equal(run.outputs.terminal_reason, "provider_error");
    assert.match(run.outputs.error!, /500/);
    assert.notEqual(run.outputs.session_id, "");
    assert.equal(run.outputs.output_file, "");
    assert.equal(JSON.parse(await Deno.readTextFile(run.outputs.result!)).exit_code, 1);
    assert.match(run.summary, /\*\*Terminal reason:\*\* `provider_error` · \*\*Exit code:\*\* 1/);
    assert.match(run.log, /^::error title=Hermes remote::failed \(provider_error\): /m);
    assert.doesNotMatch(run.log, /^sandbox\s+ok/m, "doctor: false skips it");
    assert.equal(server.requests.length, 2, "the request and its one retry went out");
  } finally {
    await server.close();
  }
});

Deno.test("action: a job-file error is exit 2 with outputs, the result file, the summary and a line annotation", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml":
      "name: broken\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\ntools:\n  bash: {}\n",
    "r.yaml": "- content: never\n",
  });
  const run = await runAction({
    actionPath: ROOT,
    workspace: dir,
    with: { job: "job.yaml", doctor: "false" },
    env: runnerEnv(),
  });
  assert.deepEqual(run.failed, { step: "Run Hermes", code: 2 }, run.log);
  assert.equal(run.outputs.status, "failed");
  assert.equal(run.outputs.exit_code, "2");
  assert.equal(run.outputs.terminal_reason, "invalid_input");
  assert.equal(run.outputs.session_id, "");
  assert.equal(run.outputs.error, 'job.yaml:5:3: unknown key "tools.bash" (did you mean "shell"?)');
  const result = JSON.parse(await Deno.readTextFile(run.outputs.result!));
  assert.deepEqual([result.exit_code, result.status], [2, "failed"]);
  assert.match(run.summary, /### Hermes: broken — failed/);
  assert.match(run.summary, /\*\*Exit code:\*\* 2/);
  assert.match(
    run.log,
    /^::error file=job\.yaml,line=5,col=3,title=Hermes broken::unknown key "tools\.bash" \(did you mean "shell"\?\)$/m,
  );
  // The problem-matcher form is printed too, for logs read without annotations.
  assert.match(run.log, /^hermes: job\.yaml:5:3: unknown key "tools\.bash"/m);
});

Deno.test("action: the problem matcher matches the error lines hermes prints", async () => {
  const matcher = JSON.parse(await Deno.readTextFile(`${ROOT}/.github/hermes-problem-matcher.json`));
  const [{ pattern: [pattern] }] = matcher.problemMatcher;
  const regexp = new RegExp(pattern.regexp);
  const line = "hermes: jobs/a.yaml:12:7: limits.max_turns: Too small: expected number to be >0";
  const match = regexp.exec(line)!;
  assert.deepEqual(
    [match[pattern.file], match[pattern.line], match[pattern.column], match[pattern.message]],
    ["jobs/a.yaml", "12", "7", "limits.max_turns: Too small: expected number to be >0"],
  );
  assert.equal(
    regexp.exec('hermes: unknown command "rn"'),
    null,
    "a line without a position is not a problem",
  );
  assert.equal(regexp.exec("hermes info: tool shell → ok, 2 B, 3 ms"), null);
});

/**
 * A runner with neither deno nor bubblewrap (nor apt-get to install it): every system tool but those three is
 * linked into a private bin folder, and node is the only way to get deno.
 */
async function bareRunnerPath(
  dir: string,
  { deno, aptGet }: { deno?: string; aptGet?: "fails" } = {},
): Promise<string> {
  const bin = `${dir}/runner-bin`;
  await Deno.mkdir(bin);
  const hidden = new Set(["bwrap", "apt-get", "deno"]);
  for (const folder of ["/usr/bin", "/usr/sbin"]) {
    for await (const entry of Deno.readDir(folder)) {
      if (hidden.has(entry.name)) continue;
      await Deno.symlink(`${folder}/${entry.name}`, `${bin}/${entry.name}`).catch(() => {});
    }
  }
  // setup-node's layout: node, npm and npx alone in their own folder.
  const node = `${dir}/node-bin`;
  await Deno.mkdir(node);
  for (const tool of ["node", "npm", "npx"]) {
    const found = Deno.env.get("PATH")!.split(":").map((p) => `${p}/${tool}`).find((p) => {
      try {
        return Deno.statSync(p).isFile;
      } catch {
        return false;
      }
    });
    if (found) await Deno.symlink(Deno.realPathSync(found), `${node}/${tool}`);
  }
  if (aptGet) {
    // A package manager that cannot install (no root, no index): the sandbox is lost, not the step.
    await Deno.writeTextFile(
      `${bin}/apt-get`,
      '#!/bin/sh\necho "E: Could not open lock file" >&2\nexit 100\n',
    );
    await Deno.chmod(`${bin}/apt-get`, 0o755);
  }
  const path = [bin, node];
  if (deno) {
    // A deno of another version already on the runner: the action must install the one it was asked for.
    await Deno.mkdir(`${dir}/old-deno`);
    await Deno.writeTextFile(`${dir}/old-deno/deno`, `#!/bin/sh\necho "deno ${deno} (stable, release)"\n`);
    await Deno.chmod(`${dir}/old-deno/deno`, 0o755);
    path.unshift(`${dir}/old-deno`);
  }
  return path.join(":");
}

/** What npx needs to reach the registry on this machine (a CA bundle for a proxy, a registry mirror). */
function npmEnv(): Record<string, string> {
  const names = [
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "npm_config_registry",
    "NPM_CONFIG_REGISTRY",
  ];
  return Object.fromEntries(Object.entries(Deno.env.toObject()).filter(([name]) => names.includes(name)));
}

for (const [installed, aptGet] of [[undefined, undefined], ["1.46.3", "fails"]] as const) {
  Deno.test(`action: a runner with ${installed ? `deno ${installed}` : "no deno"} and no bubblewrap (${aptGet ? "apt-get fails" : "no apt-get"}) installs deno ${"2.9.6"} through npx, warns about the sandbox and still runs the job`, async () => {
    const dir = await tempDir();
    await writeFiles(dir, {
      "job.yaml": "name: bare\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n",
      "r.yaml": "- content: done\n",
    });
    const run = await runAction({
      actionPath: ROOT,
      workspace: dir,
      with: { job: "job.yaml", doctor: "false", "deno-version": "2.9.6" },
      env: {
        ...runnerEnv(),
        ...npmEnv(),
        PATH: await bareRunnerPath(dir, {
          ...(installed ? { deno: installed } : {}),
          ...(aptGet ? { aptGet } : {}),
        }),
      },
    });
    assert.equal(run.failed, null, run.log);
    assert.match(run.log, /^deno 2\.9\.6 /m, "the Install Deno step printed the installed version");
    assert.match(
      run.log,
      /^::warning title=Hermes::bubblewrap is not installed: jobs with a shell tool, plugins or MCP servers will be refused \(exit 2\) unless they set sandbox: off$/m,
    );
    assert.equal(
      /^::warning title=Hermes::could not install bubblewrap with apt-get$/m.test(run.log),
      aptGet === "fails",
      "a failed apt-get is a warning, not a failed step",
    );
    assert.equal(run.outputs.status, "success");
    assert.equal(run.outputs.final, "done");
  });
}

/**
 * The lines of a step log the Actions runner takes for workflow commands (actions/runner ActionCommand:
 * `::` after leading whitespace with a second `::`, or `##[` anywhere with a `]` after it).
 */
function workflowCommands(log: string): string[] {
  return log.split(/\r\n|\r|\n/).filter((line) => {
    const trimmed = line.trimStart();
    if (trimmed.startsWith("::") && trimmed.indexOf("::", 2) >= 0) return true;
    const at = line.indexOf("##[");
    return at >= 0 && line.indexOf("]", at) >= 0;
  });
}

Deno.test("action: args is split by Hermes, not a shell — a value with spaces arrives whole, $(…) and `…` stay text", async () => {
  const server = await startOpenAIServer([{ content: "noted" }]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: words\nmodel: { name: m, base_url: "${server.url}", api_key_env: none }\n` +
        "inputs: { note: { type: string, required: true } }\nprompt: 'Note: {{ inputs.note }}'\n",
    });
    const run = await runAction({
      actionPath: ROOT,
      workspace: dir,
      with: {
        job: "job.yaml",
        doctor: "false",
        args:
          `--input 'note=two  words' --model "gpt $(touch pwned) \`touch pwned2\`" # the model\n--max-turns 5`,
      },
      env: runnerEnv(),
    });
    assert.equal(run.failed, null, run.log);
    assert.equal(run.outputs.status, "success");
    const [request] = server.requests;
    assert.equal(request!.model, "gpt $(touch pwned) `touch pwned2`");
    assert.equal(request!.messages!.at(-1)!.content, "Note: two  words");
    for (const file of ["pwned", "pwned2"]) {
      await assert.rejects(Deno.stat(`${dir}/${file}`), Deno.errors.NotFound, `${file} was created`);
    }
  } finally {
    await server.close();
  }
});

Deno.test("action: an args line that does not split is exit 2 with its outputs and annotation", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: quoted\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n",
    "r.yaml": "- content: never\n",
  });
  const run = await runAction({
    actionPath: ROOT,
    workspace: dir,
    with: { job: "job.yaml", doctor: "false", args: "--model 'gpt; touch pwned" },
    env: runnerEnv(),
  });
  assert.deepEqual(run.failed, { step: "Run Hermes", code: 2 }, run.log);
  assert.equal(run.outputs.terminal_reason, "invalid_input");
  assert.equal(run.outputs.error, "hermes run: --args: unterminated ' quote at line 1, column 9");
  assert.match(
    run.log,
    /^::error title=Hermes \S+::failed \(invalid_input\): hermes run: --args: unterminated/m,
  );
  await assert.rejects(Deno.stat(`${dir}/pwned`), Deno.errors.NotFound);
});

Deno.test("action: text the model chose never reaches the runner as a workflow command; Hermes's own annotations do", async () => {
  const hostile =
    "../x\n::add-mask::hermes\n::error title=pwned::model wrote this\n  ##[error]legacy\n::stop-commands::t";
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: hostile\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n" +
      "tools:\n  read_file: { paths: [./docs] }\nlimits: { max_turns: 2 }\n",
    "r.yaml": `- tool_calls: [{ name: read_file, arguments: { path: ${JSON.stringify(hostile)} } }]\n` +
      `- tool_calls: [{ name: read_file, arguments: { path: ${JSON.stringify(hostile)} } }]\n`,
    "docs/.keep": "",
  });
  const run = await runAction({
    actionPath: ROOT,
    workspace: dir,
    with: { job: "job.yaml", doctor: "false" },
    env: runnerEnv(),
  });
  // The run hits max_turns (exit 3): the one command in the log is Hermes's own annotation of that.
  assert.deepEqual(run.failed, { step: "Run Hermes", code: 3 }, run.log);
  assert.deepEqual(workflowCommands(run.log), [
    "::error title=Hermes hostile::limit (max_turns): Stopped after 2 turns: limits.max_turns is 2",
  ]);
  // The denial reason is still there to read, on one line.
  assert.match(
    run.log,
    /denied: "\.\.\/x%0A::add-mask::hermes%0A::error title=pwned::model wrote this%0A {2}##%5Berror\]legacy/,
  );
});

Deno.test("action: test runs hermes test with JUnit output, annotates failed expectations and fails the step", async () => {
  const job = "name: t\nmodel: { name: gpt-4.1-mini }\nprompt: hi\n";
  const dir = await writeFiles(await tempDir(), {
    "jobs/job.yaml": job,
    "jobs/ok.test.yaml": "job: job.yaml\nreplies: [{ content: hello }]\nexpect:\n  final_contains: hello\n",
    "jobs/bad.test.yaml":
      "job: job.yaml\nreplies: [{ content: hello }]\nexpect:\n  final_contains: goodbye\n",
  });
  const failing = await runAction({
    actionPath: ROOT,
    workspace: dir,
    with: { test: "jobs\n", doctor: "false" },
    env: runnerEnv(),
  });
  assert.deepEqual(failing.failed, { step: "Hermes test", code: 1 }, failing.log);
  const report = await Deno.readTextFile(failing.outputs["test-report"]!);
  assert.match(report, /<testsuites name="hermes test" tests="2" failures="1"/);
  // Hermes's own annotation reaches the runner as a command (other stderr lines are made inert).
  assert.match(
    failing.log,
    /^::error file=jobs\/bad\.test\.yaml,line=4,title=hermes test%3A bad::expect\.final_contains /m,
  );
  await Deno.remove(`${dir}/jobs/bad.test.yaml`);
  const passing = await runAction({
    actionPath: ROOT,
    workspace: dir,
    with: { test: "jobs", doctor: "false" },
    env: runnerEnv(),
  });
  assert.equal(passing.failed, null, passing.log);
  assert.match(await Deno.readTextFile(passing.outputs["test-report"]!), /tests="1" failures="0"/);
  assert.equal(passing.outputs.status, "", "no job was run");
});

Deno.test("action: values that start with '-' stay values — a Markdown list prompt runs, an args line of --help is refused", async () => {
  const server = await startOpenAIServer([{ content: "listed" }]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml":
        `name: dash\nmodel: { name: m, base_url: "${server.url}", api_key_env: none }\nprompt: hi\n`,
    });
    const run = await runAction({
      actionPath: ROOT,
      workspace: dir,
      with: {
        job: "job.yaml",
        doctor: "false",
        prompt: "- list the files\n- then stop",
      },
      env: runnerEnv(),
    });
    assert.equal(run.failed, null, run.log);
    assert.equal(run.outputs.final, "listed");
    assert.equal(server.requests[0]!.messages!.at(-1)!.content, "- list the files\n- then stop");
    const help = await runAction({
      actionPath: ROOT,
      workspace: dir,
      with: { job: "job.yaml", doctor: "false", args: "--help" },
      env: runnerEnv(),
    });
    assert.deepEqual(help.failed, { step: "Run Hermes", code: 2 }, help.log);
    assert.equal(
      help.outputs.error,
      "hermes run: --args cannot hold --help: a global flag goes before the command",
    );
    assert.equal(server.requests.length, 1);
  } finally {
    await server.close();
  }
});
