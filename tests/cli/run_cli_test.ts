/** `hermes run` end to end through the real CLI: tools, outputs, events, store, limits, bad input. */
import assert from "node:assert/strict";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { hermes, runEvents, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const TOOL_JOB = `name: tooljob
model: { provider: scripted, script: ./replies.yaml }
system: You are terse.
prompt: Write the report.
tools:
  shell: { allow: ["echo *"], timeout: 10s }
  write_file: { paths: ["./out"] }
`;
const TOOL_REPLIES = `- tool_calls: [{ name: shell, arguments: { command: "echo from-shell" } }]
- tool_calls: [{ name: write_file, arguments: { path: out/report.md, content: "# Report" } }]
- content: Done, the report is in out/report.md.
`;

async function jobDir(files: Record<string, string>): Promise<string> {
  return await writeFiles(await tempDir(), files);
}

Deno.test({
  name: "run: allowed shell and write_file, --output json matches the contract, store holds every message",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir({ "job.yaml": TOOL_JOB, "replies.yaml": TOOL_REPLIES });
  const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(code, 0, stderr);
  assert.equal(await Deno.readTextFile(`${dir}/out/report.md`), "# Report");
  const result = JSON.parse(stdout);
  assert.deepEqual(Object.keys(result).sort(), [
    "compactions",
    "cost_usd",
    "duration_ms",
    "error",
    "exit_code",
    "final",
    "job",
    "labels",
    "output",
    "schema_version",
    "session_id",
    "status",
    "terminal_reason",
    "turns",
    "type",
    "usage",
  ]);
  assert.equal(result.type, "result");
  assert.equal(result.status, "success");
  assert.equal(result.exit_code, 0);
  assert.equal(result.job, "tooljob");
  assert.equal(result.final, "Done, the report is in out/report.md.");
  assert.equal(result.turns, 3);
  assert.equal(result.terminal_reason, "completed");
  assert.equal(result.error, null);
  assert.ok(result.usage.prompt_tokens > 0 && result.usage.completion_tokens > 0);

  const store = openSqliteStore(`${dir}/state.db`);
  try {
    const messages = await store.allMessages(result.session_id);
    assert.deepEqual(messages.map((m) => m.role), [
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
    assert.match(messages[3]!.content, /from-shell/);
    assert.equal(messages[3]!.tool_call_id, messages[2]!.tool_calls![0]!.id);
    assert.equal((await store.getSession(result.session_id))!.status, "success");
  } finally {
    await store.close();
  }
});

Deno.test({
  name: "run: stream-json prints ordered events with increasing seq, ending with the result",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir({ "job.yaml": TOOL_JOB, "replies.yaml": TOOL_REPLIES });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  const types = events.map((e) => e.type);
  assert.equal(types[0], "session.start");
  assert.equal(types.at(-1), "result");
  assert.equal(types.at(-2), "session.end");
  for (const type of ["turn.start", "message", "tool.call", "tool.result", "turn.end"]) {
    assert.ok(types.includes(type), type);
  }
  assert.ok(types.indexOf("tool.call") < types.indexOf("tool.result"));
  const seqs = events.map((e) => e.seq as number);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
  for (const e of events) {
    assert.equal(typeof e.session_id, "string");
    assert.ok(!Number.isNaN(Date.parse(String(e.ts))));
  }
  assert.equal(events.at(-1)!.status, "success");
});

const SMUGGLING = [
  "rm -f marker",
  "echo ok; touch marker",
  "echo ok && touch marker",
  "echo ok || touch marker",
  "echo ok | touch marker",
  "echo $(touch marker)",
  "echo `touch marker`",
  "echo ok > marker",
  "echo ok\ntouch marker",
];

Deno.test({
  name: "run: a disallowed command and every smuggling form is denied and never runs",
  ignore: withoutSandbox,
}, async () => {
  const calls = SMUGGLING.map((command) =>
    `    - { name: shell, arguments: { command: ${JSON.stringify(command)} } }`
  );
  const replies = `- tool_calls:\n${calls.join("\n")}\n- content: I was not allowed.\n`;
  const dir = await jobDir({ "job.yaml": TOOL_JOB, "replies.yaml": replies });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  await assert.rejects(Deno.stat(`${dir}/marker`), Deno.errors.NotFound);
  const results = events.filter((e) => e.type === "tool.result");
  assert.equal(results.length, SMUGGLING.length);
  for (const r of results) {
    assert.equal(r.status, "denied");
    assert.match(String(r.content), /^denied: /);
  }
  assert.equal(events.filter((e) => e.type === "tool.denied").length, SMUGGLING.length);
});

Deno.test("run: bad input exits 2 with one line naming the problem and no stack trace", async () => {
  const dir = await jobDir({
    "malformed.yaml": "name: x\nprompt: [oops\n",
    "unknown.yaml": "name: x\npromt: hi\n",
    "wrongtype.yaml": "name: x\nprompt: hi\nlimits: { max_turns: lots }\n",
    "needs.yaml": "name: x\ninputs: { repo: { required: true } }\nprompt: '{{ inputs.repo }}'\n",
    "template.yaml": "name: x\nprompt: 'hi {{ inputs.nobody }}'\n",
    "noscript.yaml": "name: x\nmodel: { provider: scripted, script: ./missing.yaml }\nprompt: hi\n",
  });
  const cases: [string[], RegExp][] = [
    [["run", "malformed.yaml"], /malformed\.yaml:\d+:\d+: invalid YAML/],
    [["run", "unknown.yaml"], /unknown\.yaml:2:1: unknown key "promt" \(did you mean "prompt"\?\)/],
    [["run", "wrongtype.yaml"], /wrongtype\.yaml:3:\d+: limits\.max_turns: /],
    [["run", "needs.yaml"], /Missing required input "repo"/],
    [["run", "template.yaml"], /template\.yaml:2:9: unknown template reference/],
    [["run", "absent.yaml"], /Cannot read job file "absent\.yaml": no such file/],
    [["run", "noscript.yaml"], /Cannot read scripted replies ".*missing\.yaml"/],
    [["run", "unknown.yaml", "--output", "xml"], /--output "xml"/],
    [["run", "unknown.yaml", "--bogus"], /--bogus/],
    [["run"], /expected JOB\.yaml, -p PROMPT, or --resume/],
  ];
  for (const [args, pattern] of cases) {
    const { code, stdout, stderr } = await hermes(args, { cwd: dir, home: dir });
    assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
    assert.equal(stdout, "");
    const lines = stderr.trim().split("\n");
    assert.equal(lines.length, 1, `${args.join(" ")}: ${stderr}`);
    assert.match(lines[0]!, pattern);
    assert.doesNotMatch(stderr, /\n\s+at /);
  }
});

Deno.test(
  { name: "run: a model that keeps calling tools hits max_turns → exit 3", ignore: withoutSandbox },
  async () => {
    const replies = Array.from(
      { length: 10 },
      () => `- tool_calls: [{ name: shell, arguments: { command: "echo again" } }]`,
    )
      .join("\n");
    const job = TOOL_JOB + "limits: { max_turns: 3 }\n";
    const dir = await jobDir({ "job.yaml": job, "replies.yaml": replies + "\n" });
    const { code, stdout } = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
    assert.equal(code, 3);
    const result = JSON.parse(stdout);
    assert.equal(result.status, "limit");
    assert.equal(result.terminal_reason, "max_turns");
    assert.equal(result.turns, 3);
  },
);

Deno.test("run: a slow model hits limits.timeout → exit 3 within 2 s of the limit", async () => {
  const dir = await jobDir({
    "job.yaml":
      "name: slow\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\nlimits: { timeout: 1s }\n",
    "r.yaml": "- { content: late, delay: 30s }\n",
  });
  const started = performance.now();
  const { code, stdout } = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  const elapsed = performance.now() - started;
  assert.equal(code, 3);
  assert.equal(JSON.parse(stdout).terminal_reason, "timeout");
  assert.ok(elapsed < 1000 + 2000 + 2000, `took ${elapsed} ms (includes Deno start-up)`);
});

Deno.test("run: an empty final answer is exit 1 (empty_response); a run never exits 0 without a prompt", async () => {
  const dir = await jobDir({
    "job.yaml": "name: empty\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n",
    "r.yaml": "- { content: '' }\n",
    "noprompt.yaml": "name: empty\nmodel: { provider: scripted, script: ./r.yaml }\n",
  });
  const empty = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(empty.code, 1);
  assert.equal(JSON.parse(empty.stdout).terminal_reason, "empty_response");
  const none = await hermes(["run", "noprompt.yaml"], { cwd: dir, home: dir });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /Nothing to run/);
});

Deno.test("run -p - reads the prompt from stdin and uses config.yaml defaults", async () => {
  const dir = await jobDir({ "r.yaml": "- { match: from stdin, content: got it }\n" });
  await Deno.writeTextFile(`${dir}/config.yaml`, `model: { provider: scripted, script: ${dir}/r.yaml }\n`);
  const { code, stdout, stderr } = await hermes(["run", "-p", "-", "--output", "json"], {
    cwd: dir,
    home: dir,
    stdin: "a prompt from stdin\n",
  });
  assert.equal(code, 0, stderr);
  const result = JSON.parse(stdout);
  assert.equal(result.final, "got it");
  assert.equal(result.job, "oneshot");
});

Deno.test("run: output.schema validates, repairs once, and fails with schema_mismatch", async () => {
  const job = (replies: string) =>
    `name: structured\nmodel: { provider: scripted, script: ./${replies} }\nprompt: labels please\n` +
    `output: { file: ./out/labels.json, schema: { type: object, required: [labels], properties: { labels: { type: array } } } }\n`;
  const dir = await jobDir({
    "good.yaml": job("good.r.yaml"),
    "good.r.yaml": `- content: 'not json'\n- content: '{"labels": ["bug"]}'\n`,
    "bad.yaml": job("bad.r.yaml"),
    "bad.r.yaml": `- content: '{"labels": 1}'\n- content: 'still wrong'\n`,
  });
  const good = await hermes(["run", "good.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(good.code, 0, good.stderr);
  assert.deepEqual(JSON.parse(good.stdout).output, { labels: ["bug"] });
  assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/out/labels.json`)), { labels: ["bug"] });
  const bad = await hermes(["run", "bad.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(bad.code, 1);
  const result = JSON.parse(bad.stdout);
  assert.equal(result.terminal_reason, "schema_mismatch");
  assert.equal(result.status, "failed");
});

Deno.test({
  name: "run: GITHUB_OUTPUT and GITHUB_STEP_SUMMARY receive session_id, status and the answer",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir({ "job.yaml": TOOL_JOB, "replies.yaml": TOOL_REPLIES });
  const env = { GITHUB_OUTPUT: `${dir}/gh_output`, GITHUB_STEP_SUMMARY: `${dir}/gh_summary` };
  const { code, stdout } = await hermes(["run", "job.yaml"], { cwd: dir, home: dir, env });
  assert.equal(code, 0);
  assert.equal(stdout, "Done, the report is in out/report.md.\n");
  const output = await Deno.readTextFile(env.GITHUB_OUTPUT);
  assert.match(output, /^session_id=\d{8}-\d{6}-[0-9a-f]{6}$/m);
  assert.match(output, /^status=success$/m);
  assert.match(output, /final<<(HERMES_\w+)\nDone, the report is in out\/report\.md\.\n\1\n/);
  assert.match(await Deno.readTextFile(env.GITHUB_STEP_SUMMARY), /success/);
});

Deno.test("run: SIGTERM stops at a safe point with exit 143 and an interrupted result", async () => {
  const dir = await jobDir({
    "job.yaml": "name: slow\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n",
    "r.yaml": "- { content: late, delay: 60s }\n",
  });
  const child = spawnHermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  await waitForMessages(`${dir}/state.db`, 1);
  child.kill("SIGTERM");
  const { code, stdout } = await child.output();
  assert.equal(code, 143);
  const result = JSON.parse(new TextDecoder().decode(stdout));
  assert.equal(result.status, "interrupted");
  const store = openSqliteStore(`${dir}/state.db`);
  try {
    assert.equal((await store.getSession(result.session_id))!.status, "interrupted");
  } finally {
    await store.close();
  }
});

Deno.test({
  name: "run: SIGKILL mid-run keeps every committed message and the store opens cleanly",
  ignore: withoutSandbox,
}, async () => {
  const replies = [
    `- tool_calls: [{ name: shell, arguments: { command: "echo one" } }]`,
    `- tool_calls: [{ name: shell, arguments: { command: "echo two" } }]`,
    `- { content: never, delay: 60s }`,
  ].join("\n");
  const dir = await jobDir({ "job.yaml": TOOL_JOB, "replies.yaml": replies + "\n" });
  const child = spawnHermes(["run", "job.yaml"], { cwd: dir, home: dir });
  await waitForMessages(`${dir}/state.db`, 6);
  child.kill("SIGKILL");
  await child.output();
  const show = await hermes(["sessions", "show", "latest", "--json"], { cwd: dir, home: dir });
  assert.equal(show.code, 0, show.stderr);
  const store = openSqliteStore(`${dir}/state.db`);
  try {
    const [session] = await store.listSessions();
    const roles = (await store.allMessages(session!.id)).map((m) => m.role);
    assert.deepEqual(roles, ["system", "user", "assistant", "tool", "assistant", "tool"]);
    assert.equal(sqliteHandle(store).db.prepare("PRAGMA integrity_check").get()!.integrity_check, "ok");
  } finally {
    await store.close();
  }
});

async function waitForMessages(dbPath: string, count: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const store = openSqliteStore(dbPath);
      try {
        const row = sqliteHandle(store).db.prepare("SELECT count(*) AS n FROM messages").get() as {
          n: number;
        };
        if (Number(row.n) >= count) return;
      } finally {
        await store.close();
      }
    } catch {
      // the store may not exist yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`store never reached ${count} messages`);
}

Deno.test("run --resume continues a stored session: -p adds a turn to it; an unknown id is exit 2", async () => {
  const dir = await jobDir({
    "job.yaml": "name: chat\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: first question\n",
    "r.yaml":
      "- { match: first question, content: first answer }\n- { match: follow-up, content: second answer }\n",
  });
  const first = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(first.code, 0, first.stderr);
  const id = JSON.parse(first.stdout).session_id;
  const again = await hermes(["run", "-p", "a follow-up", "--resume", id.slice(0, 17), "--output", "json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(again.code, 0, again.stderr);
  const result = JSON.parse(again.stdout);
  assert.equal(result.session_id, id);
  assert.equal(result.final, "second answer");
  const store = openSqliteStore(`${dir}/state.db`);
  try {
    assert.deepEqual((await store.allMessages(id)).map((m) => m.content), [
      "first question",
      "first answer",
      "a follow-up",
      "second answer",
    ]);
  } finally {
    await store.close();
  }
  const nothingLeft = await hermes(["run", "--resume", id], { cwd: dir, home: dir });
  assert.equal(nothingLeft.code, 2);
  assert.match(nothingLeft.stderr, /nothing left to run/);
  const unknown = await hermes(["run", "-p", "x", "--resume", "no-such-session"], { cwd: dir, home: dir });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /"no-such-session"/);
});

Deno.test("run: a job with a schedule runs once and says on stderr that only hermes daemon honours it", async () => {
  const replies = "- content: ran once\n";
  const scheduled = `name: nightly\nmodel: { provider: scripted, script: ./replies.yaml }\nprompt: go\n` +
    `schedule: { cron: "0 9 * * 1-5", overlap: queue }\n`;
  const dir = await jobDir({ "job.yaml": scheduled, "replies.yaml": replies });
  const { code, stdout, stderr } = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(code, 0, stderr);
  assert.equal(stdout, "ran once\n");
  assert.match(
    stderr,
    /job "nightly" has a schedule \(cron "0 9 \* \* 1-5"\): hermes run runs it once, now; only hermes daemon runs it on its schedule/,
  );
  // Without a schedule, no such line.
  const plain = await jobDir({
    "job.yaml": scheduled.replace(/schedule:.*\n/, ""),
    "replies.yaml": replies,
  });
  const unscheduled = await hermes(["run", "job.yaml"], { cwd: plain, home: plain });
  assert.equal(unscheduled.code, 0, unscheduled.stderr);
  assert.doesNotMatch(unscheduled.stderr, /schedule/);
});
