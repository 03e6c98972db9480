/**
 * Cost on every ending, through real CLI subprocesses against the scripted OpenAI-compatible server, on SQLite
 * and on PostgreSQL (HERMES_TEST_POSTGRES_URL): runs that succeed, fail, hit max_cost, are SIGKILLed and are
 * cancelled (SIGINT) halfway through a streamed reply all appear in `hermes cost` with what they spent;
 * `--by label:repository`, `--by day` and `--by job` agree with a sum over the sessions; a run under GitHub
 * Actions' environment carries its repository, run id and sha labels into the result, `sessions show` and
 * `hermes cost --by label:ci.repository`.
 */
import assert from "node:assert/strict";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ChatRequestBody, startOpenAIServer } from "../_testing/openai_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { scratchDatabase } from "../../runtime/store/postgres/_testing.ts";

const URL_VARIABLE = "HERMES_TEST_POSTGRES_URL";
const serverUrl = Deno.env.get(URL_VARIABLE);

// gpt-4.1-mini's list price per million tokens: $0.40 input, $0.10 cached input, $1.60 output.
const toolRound: ScriptEntry = {
  tool_calls: [{ name: "list_dir", arguments: { path: "." } }],
  usage: { prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 400 },
};
const TOOL_ROUND_USD = (600 * 0.4 + 400 * 0.1 + 200 * 1.6) / 1e6;
const answer: ScriptEntry = { content: "two files", usage: { prompt_tokens: 1500, completion_tokens: 100 } };
const ANSWER_USD = (1500 * 0.4 + 100 * 1.6) / 1e6;
// A whole reply long enough that its estimated output alone passes a $0.01 cap; it cost what the server said.
const overCap: ScriptEntry = {
  content: "x".repeat(40_000),
  usage: { prompt_tokens: 20_000, completion_tokens: 10_000 },
};
const OVER_CAP_USD = (20_000 * 0.4 + 10_000 * 1.6) / 1e6;

const GITHUB = {
  GITHUB_ACTIONS: "true",
  GITHUB_REPOSITORY: "octo/widgets",
  GITHUB_RUN_ID: "987654",
  GITHUB_RUN_ATTEMPT: "2",
  GITHUB_SHA: "0123456789abcdef0123456789abcdef01234567",
  GITHUB_REF: "refs/pull/42/merge",
  GITHUB_WORKFLOW: "triage",
};

function job(name: string, url: string, stream = false) {
  return `name: ${name}\nmodel: { name: gpt-4.1-mini-2025-04-14, base_url: "${url}", api_key_env: none, ` +
    `max_retries: 0, stream: ${stream} }\n` +
    `labels: { repository: "{{ inputs.repo }}", team: platform }\n` +
    `inputs: { repo: { type: string, required: true } }\n` +
    `prompt: look around\ntools:\n  list_dir: { paths: ["."] }\n`;
}

interface Ending {
  name: string;
  script: ScriptEntry[];
  repo: string;
  /** What its model calls cost, by the price table. */
  usd: number;
  calls: number;
  exit: number;
  args?: string[];
  env?: Record<string, string>;
  /** Stopped from outside halfway through its second reply's stream (what it spent: its first call). */
  signal?: "SIGKILL" | "SIGINT";
}

const ENDINGS: Ending[] = [
  {
    name: "success",
    script: [toolRound, answer],
    repo: "o/a",
    usd: TOOL_ROUND_USD + ANSWER_USD,
    calls: 2,
    exit: 0,
    env: GITHUB,
  },
  {
    name: "failed",
    script: [toolRound, { error: { status: 500, message: "the model fell over" } }],
    repo: "o/b",
    usd: TOOL_ROUND_USD,
    calls: 1,
    exit: 1,
  },
  {
    name: "max-cost",
    script: [overCap],
    repo: "o/a",
    usd: OVER_CAP_USD,
    calls: 1,
    exit: 3,
    args: ["--max-budget-usd", "0.01"],
  },
  {
    name: "killed",
    script: [toolRound, answer],
    repo: "o/b",
    usd: TOOL_ROUND_USD,
    calls: 1,
    exit: 137,
    signal: "SIGKILL",
  },
  {
    name: "cancelled",
    script: [toolRound, answer],
    repo: "o/c",
    usd: TOOL_ROUND_USD,
    calls: 1,
    exit: 130,
    signal: "SIGINT",
  },
];

const near = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} ≠ ${b}`);

/** Runs one ending in its own directory against its own server; the result object when one was printed. */
async function runEnding(ending: Ending, store: { home: string; db: string[] }) {
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  let midway = () => {};
  const streaming = new Promise<void>((resolve) => midway = resolve);
  const server = await startOpenAIServer({
    script: ending.script,
    // The second reply of a run stopped from outside stops halfway through its stream until the test has
    // stopped the run: it is killed or cancelled mid-stream.
    ...(ending.signal
      ? {
        midStream: (_body: ChatRequestBody) => {
          if (server.requests.length < 2) return Promise.resolve();
          midway();
          return held;
        },
      }
      : {}),
  });
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": job(ending.name, server.url, !!ending.signal),
    });
    const args = [
      "run",
      "job.yaml",
      "--output",
      "json",
      "--input",
      `repo=${ending.repo}`,
      ...store.db,
      ...(ending.args ?? []),
    ];
    const options = { cwd: dir, home: store.home, env: ending.env ?? {} };
    if (!ending.signal) {
      const run = await hermes(args, options);
      assert.equal(run.code, ending.exit, `${ending.name}: ${run.stderr}`);
      return JSON.parse(run.stdout) as Record<string, unknown>;
    }
    const child = spawnHermes(args, options);
    const output = child.output();
    await streaming;
    child.kill(ending.signal);
    const out = await output;
    if (ending.signal === "SIGKILL") {
      assert.equal(out.signal, "SIGKILL");
      return undefined;
    }
    assert.equal(out.code, ending.exit, new TextDecoder().decode(out.stderr));
    return JSON.parse(new TextDecoder().decode(out.stdout)) as Record<string, unknown>;
  } finally {
    release();
    await server.close();
  }
}

async function json(args: string[], store: { home: string; db: string[] }) {
  const run = await hermes([...args, ...store.db], { home: store.home });
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

type Group = {
  calls: number;
  sessions: number;
  input_tokens: number;
  cost_usd: number;
  unpriced_calls: number;
};

async function everyEndingCounts(store: { home: string; db: string[] }) {
  const results = new Map<string, Record<string, unknown> | undefined>();
  for (const ending of ENDINGS) results.set(ending.name, await runEnding(ending, store));

  // Each result says what its run spent, and it is what the price table says the calls cost.
  for (const ending of ENDINGS) {
    const result = results.get(ending.name);
    if (result) near(Number(result.cost_usd), ending.usd, `${ending.name}: the result's cost`);
  }
  const sessions: { job: string; cost_usd: number; prompt_tokens: number; labels: Record<string, string> }[] =
    await json(["sessions", "list", "--json"], store);
  assert.equal(sessions.length, ENDINGS.length);

  const report = await json(["cost", "--json", "--by", "job"], store);
  const byJob = new Map<string, Group>(report.groups.map((g: Group & { job: string }) => [g.job, g]));
  for (const ending of ENDINGS) {
    const group = byJob.get(ending.name);
    assert.ok(group, `${ending.name} appears in hermes cost`);
    near(group.cost_usd, ending.usd, `${ending.name}: hermes cost`);
    assert.equal(group.calls, ending.calls, `${ending.name}: calls`);
    const session = sessions.find((s) => s.job === ending.name)!;
    near(session.cost_usd, ending.usd, `${ending.name}: the session's cost`);
  }
  const sum = (rows: { cost_usd: number }[]) => rows.reduce((n, r) => n + r.cost_usd, 0);
  near(report.total.cost_usd, sum(sessions), "the total is the sum over the sessions");
  assert.equal(report.total.input_tokens, sessions.reduce((n, s) => n + s.prompt_tokens, 0));
  assert.equal(report.total.calls, ENDINGS.reduce((n, e) => n + e.calls, 0));
  assert.equal(report.total.sessions, ENDINGS.length);

  // By label: each repository's spend is the sum over its sessions.
  const byRepo = await json(["cost", "--json", "--by", "label:repository"], store);
  const repos = [...new Set(sessions.map((s) => s.labels.repository!))].sort();
  assert.deepEqual(byRepo.groups.map((g: { labels: { repository: string } }) => g.labels.repository), repos);
  for (const group of byRepo.groups) {
    near(
      group.cost_usd,
      sum(sessions.filter((s) => s.labels.repository === group.labels.repository)),
      `repository ${group.labels.repository}`,
    );
  }
  // By day: the days add up to the sessions' sum (every run was today, UTC).
  const byDay = await json(["cost", "--json", "--by", "day"], store);
  near(sum(byDay.groups), sum(sessions), "days");
  assert.deepEqual(byDay.groups.map((g: { day: string }) => g.day), [new Date().toISOString().slice(0, 10)]);
  // A range that ends before today has none of it.
  const before = await json(["cost", "--json", "--until", "2000-01-01"], store);
  assert.equal(before.total.calls, 0);

  // The run under GitHub Actions carries its CI labels: in the result, the session and hermes cost.
  const success = results.get("success")!;
  const ci = {
    "ci.provider": "github",
    "ci.repository": "octo/widgets",
    "ci.run_id": "987654",
    "ci.run_attempt": "2",
    "ci.sha": GITHUB.GITHUB_SHA,
    "ci.pull_request": "42",
    "ci.workflow": "triage",
  };
  const labels = success.labels as Record<string, string>;
  for (const [key, value] of Object.entries(ci)) assert.equal(labels[key], value, key);
  assert.equal(labels.repository, "o/a", "the job's own labels: template rendered");
  const shown = await json(["sessions", "show", String(success.session_id), "--json"], store);
  assert.deepEqual(shown.session.labels, labels);
  const text = await hermes(["sessions", "show", String(success.session_id), ...store.db], {
    home: store.home,
  });
  assert.match(text.stdout, /labels .*ci\.repository=octo\/widgets/);
  const byCiRepo = await json(["cost", "--json", "--by", "label:ci.repository"], store);
  assert.deepEqual(
    byCiRepo.groups.map((
      g: Group & { labels: Record<string, string | null> },
    ) => [g.labels["ci.repository"], g.calls]),
    [["octo/widgets", 2], [null, 4]],
  );
  // A run outside CI has no ci.* labels.
  const failed = results.get("failed")!;
  assert.deepEqual(failed.labels, { repository: "o/b", team: "platform" });
}

Deno.test("cost (sqlite): success, failed, max_cost, SIGKILL and cancel all count in hermes cost", async () => {
  const home = await tempDir();
  await everyEndingCounts({ home, db: [] });
});

if (serverUrl) {
  Deno.test("cost (postgres): success, failed, max_cost, SIGKILL and cancel all count in hermes cost", async () => {
    await using db = await scratchDatabase(serverUrl, "hermes_cost");
    await everyEndingCounts({ home: await tempDir(), db: ["--db", db.url] });
  });
} else if (Deno.env.get("CI") === "true") {
  Deno.test("cost (postgres): HERMES_TEST_POSTGRES_URL is set under CI", () => {
    assert.fail(`${URL_VARIABLE} is not set, so the PostgreSQL cost test did not run; .ci/run sets it`);
  });
} else {
  Deno.test({ name: `cost (postgres): skipped: ${URL_VARIABLE} is not set`, ignore: true, fn() {} });
}

Deno.test("cost: --label adds to the job's labels; bad --label and --by are one line, exit 2", async () => {
  const server = await startOpenAIServer([answer]);
  try {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job("labelled", server.url) });
    const run = await hermes(
      [
        "run",
        "job.yaml",
        "--output",
        "json",
        "--input",
        "repo=o/z",
        "--label",
        "team=infra",
        "--label",
        "pr=7",
      ],
      { cwd: dir, home: dir },
    );
    assert.equal(run.code, 0, run.stderr);
    const labelled = JSON.parse(run.stdout);
    assert.deepEqual(labelled.labels, { repository: "o/z", team: "infra", pr: "7" });
    // A resumed session keeps its labels: a --label with --resume is refused, a resume without one is not.
    server.push(answer, answer);
    const relabel = await hermes(["run", "--resume", labelled.session_id, "-p", "again", "--label", "pr=8"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(relabel.code, 2);
    assert.match(relabel.stderr, /^hermes run: --label labels a new session; a resumed session keeps/);
    const resumed = await hermes(
      ["run", "--resume", labelled.session_id, "-p", "again", "--output", "json"],
      {
        cwd: dir,
        home: dir,
      },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(JSON.parse(resumed.stdout).labels, labelled.labels);
    for (
      const [args, message] of [
        [["run", "job.yaml", "--input", "repo=x", "--label", "no-equals"], /invalid --label "no-equals"/],
        [["run", "job.yaml", "--input", "repo=x", "--label", 'a"b=1'], /invalid --label/],
        [["cost", "--by", "week"], /invalid --by "week": expected job, model, day or label:KEY/],
        [["cost", "--by", "label:"], /invalid --by "label:"/],
        [["cost", "--since", "last tuesday"], /invalid --since "last tuesday"/],
        [["cost", "--since", "2026-02-01", "--until", "2026-01-01"], /the range is empty/],
        [["cost", "--json", "--csv"], /--json and --csv exclude each other/],
        [["cost", "--group", "job"], /unknown flag "--group"/],
      ] as const
    ) {
      const bad = await hermes([...args], { cwd: dir, home: dir });
      assert.equal(bad.code, 2, `${args.join(" ")}: ${bad.stderr}`);
      assert.match(bad.stderr, message);
      assert.equal(bad.stderr.trim().split("\n").length, 1, `one line: ${bad.stderr}`);
    }
    assert.equal(server.requests.length, 2, "no bad run reached the model");
  } finally {
    await server.close();
  }
});

Deno.test("cost: --csv and the table show the same groups; a job label's template is checked by validate", async () => {
  const server = await startOpenAIServer([toolRound, answer]);
  try {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job("tabled", server.url) });
    const run = await hermes(["run", "job.yaml", "--input", "repo=a,b"], { cwd: dir, home: dir });
    assert.equal(run.code, 0, run.stderr);
    const csv = await hermes(["cost", "--csv", "--by", "label:repository", "--by", "model"], { home: dir });
    assert.equal(csv.code, 0, csv.stderr);
    const [header, ...rows] = csv.stdout.trim().split("\n");
    assert.equal(
      header,
      "label:repository,model,calls,sessions,input_tokens,cached_tokens,cache_write_tokens,output_tokens," +
        "reasoning_tokens,cost_usd,unpriced_calls",
    );
    assert.deepEqual(rows, [
      `"a,b",gpt-4.1-mini-2025-04-14,2,1,2500,400,0,300,0,${TOOL_ROUND_USD + ANSWER_USD},0`,
    ]);
    const table = await hermes(["cost", "--by", "label:repository"], { home: dir });
    assert.match(
      table.stdout,
      /^LABEL:REPOSITORY +CALLS +SESSIONS +INPUT +CACHED +OUTPUT +REASONING +COST$/m,
    );
    assert.match(table.stdout, /^a,b +2 +1 +2500 +400 +300 +0 +\$0\.0014$/m);
    assert.match(table.stdout, /^TOTAL +2 +1 +2500/m);
    await Deno.writeTextFile(
      `${dir}/bad.yaml`,
      (await Deno.readTextFile(`${dir}/job.yaml`)).replace("{{ inputs.repo }}", "{{ inputs.nope }}"),
    );
    const bad = await hermes(["validate", "bad.yaml"], { cwd: dir, home: dir });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr + bad.stdout, /bad\.yaml:3:\d+.*inputs\.nope/);
  } finally {
    await server.close();
  }
});
