/**
 * The modules on the start-up paths that bench/startup_bench.ts measures against a bare `deno run` (see
 * docs/architecture.md, Start-up): what `hermes --version` and `hermes sessions list` evaluate before they
 * print is the static import graph of a few entry modules, read here from `deno info --json`. None of it may
 * reach an npm package (zod, ajv, yaml, the SDKs) or a `node:` module other than `node:sqlite` (Deno's Node
 * layer, `node:crypto` among it, costs ms at each first use); `sessions list` reads the store with one
 * read-only connection, not through the full store's modules.
 */
import assert from "node:assert/strict";
import { ROOT } from "../_testing/cli.ts";

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
}

/**
 * Each module's imports of code by specifier: `static`, neither `import()` nor `import type`; `dynamic`, its
 * `import()`s of a literal path.
 */
async function importGraphs(): Promise<{ static: Map<string, string[]>; dynamic: Map<string, string[]> }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const { modules } = JSON.parse(new TextDecoder().decode(stdout)) as { modules: InfoModule[] };
  const imports = (dynamic: boolean) =>
    new Map(modules.map((m) => [
      m.specifier,
      (m.dependencies ?? []).flatMap((d) => d.code && !d.isDynamic === !dynamic ? [d.code.specifier] : []),
    ]));
  return { static: imports(false), dynamic: imports(true) };
}

/** Everything the entry modules (paths from the root) evaluate before their first line runs. */
function closure(graph: Map<string, string[]>, entries: string[]): string[] {
  const seen = new Set<string>();
  const visit = (specifier: string) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const next of graph.get(specifier) ?? []) visit(next);
  };
  for (const entry of entries) {
    const specifier = new URL(entry, `file://${ROOT}/`).href;
    assert.ok(graph.has(specifier), `${entry} is not in the program's module graph`);
    visit(specifier);
  }
  return [...seen].map((s) => s.startsWith(`file://${ROOT}/`) ? s.slice(`file://${ROOT}/`.length) : s).sort();
}

/** The modules of a path that it must not load: npm packages, Deno's Node layer, the full store. */
function heavy(modules: string[], allowed: string[] = []): string[] {
  return modules.filter((m) =>
    !allowed.includes(m) &&
    (m.startsWith("npm:") || m.includes("/npm/") || m.startsWith("node:") ||
      m === "runtime/store/sqlite/sqlite_store.ts" || m === "runtime/store/retry.ts")
  );
}

const graphs = await importGraphs();
const graph = graphs.static;
/**
 * What `hermes run JOB.yaml` imports before it calls the model: the command, the job loader, the App's run
 * and the session it opens (each imported on use by the one before).
 */
const RUN_JOB_PATH = [
  "commands/run.ts",
  "runtime/config/prechecked.ts",
  "runtime/app/run.ts",
  "runtime/app/open_session.ts",
  "runtime/session/live_session.ts",
  "runtime/tools/session.ts",
];

/** What `module` (a path from the root) imports with `import()`, as paths from the root. */
function dynamicImports(module: string): string[] {
  const imported = graphs.dynamic.get(new URL(module, `file://${ROOT}/`).href);
  assert.ok(imported, `${module} is not in the program's module graph`);
  return imported.map((s) => s.slice(`file://${ROOT}/`.length)).sort();
}

Deno.test("start-up path: --version evaluates main.ts's static imports and the version, none of them heavy", () => {
  const modules = closure(graph, ["main.ts", "runtime/core/version.ts"]);
  assert.deepEqual(heavy(modules), []);
  // The secrets' names come from the providers' registry: loaded with the command, not for --version.
  assert.deepEqual(modules.filter((m) => m.startsWith("runtime/providers/")), []);
  // What main.ts evaluates before its first line: the global flags and the errors, nothing a command brings
  // (the GitHub workflow-command escaping is imported on a GitHub runner alone).
  assert.deepEqual(closure(graph, ["main.ts"]), [
    "commands/_global_flags.ts",
    "main.ts",
    "runtime/core/errors.ts",
  ]);
  // The version reads the checkout's commit with string paths of its own, not path.ts.
  assert.deepEqual(closure(graph, ["runtime/core/version.ts"]), ["runtime/core/version.ts"]);
});

Deno.test("start-up path: sessions list loads node:sqlite and the lister, not the store, npm or node:crypto", () => {
  // main.ts answers `sessions list` from list_quick.ts before it sets a command up.
  const quick = closure(graph, ["main.ts", "commands/sessions/list_quick.ts"]);
  assert.ok(quick.includes("runtime/store/sqlite/lister.ts"), quick.join("\n"));
  assert.deepEqual(heavy(quick, ["node:sqlite"]), []);
  assert.deepEqual(quick.filter((m) => m.startsWith("runtime/providers/") || m.includes("secrets")), []);
  // Nor every command's flags, nor the migrations' SQL (the lister compares the schema version alone).
  assert.deepEqual(
    quick.filter((m) => m === "commands/_flags.ts" || m === "runtime/store/_migrations.ts"),
    [],
  );
  // When it cannot answer: what main.ts imports for every command (its Promise.all), the sessions
  // dispatcher and its list.
  const full = closure(graph, [
    "main.ts",
    "commands/_cli.ts",
    "runtime/store/open.ts",
    "runtime/session/secrets.ts",
    "runtime/core/path.ts",
    "runtime/core/clock.ts",
    "runtime/core/log.ts",
    "runtime/core/redact.ts",
    "runtime/store/retry_notice.ts",
    "commands/sessions.ts",
    "commands/sessions/list.ts",
  ]);
  assert.deepEqual(heavy(full, ["node:sqlite"]), []);
});

Deno.test("start-up path: sessions list's quick answer imports the lister alone, not the flag parser or the store opener", () => {
  // Each module costs the path a fraction of a millisecond: list_quick.ts reads the plain flag forms itself,
  // the lister queries its connection without a SqliteDb (_db.ts) and its clock.
  assert.deepEqual(closure(graph, ["commands/sessions/list_quick.ts"]), [
    "commands/sessions/list_quick.ts",
    "node:sqlite",
    "runtime/store/schema_version.ts",
    "runtime/store/sqlite/lister.ts",
    "runtime/store/sqlite/listing.ts",
  ]);
});

Deno.test("start-up path: run JOB.yaml reaches no npm package before its first request, croner only with a schedule", () => {
  const run = closure(graph, RUN_JOB_PATH);
  assert.ok(run.includes("runtime/config/job_checks.ts"), run.join("\n"));
  assert.ok(run.includes("runtime/tools/builtin.ts"), run.join("\n"));
  assert.deepEqual(run.filter((m) => m.startsWith("npm:") || m.includes("/npm/")), []);
  // The guard sees croner where a schedule is compiled.
  assert.ok(closure(graph, ["runtime/config/cron.ts"]).some((m) => m.includes("croner")));
});

Deno.test("start-up path: a job under no trust policy loads none of the policy's checks, nor output.schema's, nor config.yaml's", () => {
  // With no policy in force (no config.yaml `policy:`, no policy file, no --untrusted) holding a job to the
  // policies changes nothing: prechecked.ts imports job_policy.ts only when one is (job_load.ts refuses to
  // load a job without it then).
  const run = closure(graph, RUN_JOB_PATH);
  const policyChecks = [
    "runtime/config/job_policy.ts",
    "runtime/config/policy.ts",
    "runtime/config/policy_limits.ts",
    "runtime/config/policy_match.ts",
    "runtime/config/job_protection.ts",
    "runtime/config/steering_env.ts",
    "runtime/sandbox/policy.ts",
    "runtime/sandbox/net_hosts.ts",
    "runtime/sandbox/ip_address.ts",
  ];
  assert.deepEqual(run.filter((m) => policyChecks.includes(m)), []);
  // Without a config.yaml or a policy file there is nothing to anchor at the home: its loader is not imported.
  assert.deepEqual(
    run.filter((m) => m === "runtime/config/user_config_load.ts" || m === "runtime/config/plugin_entry.ts"),
    [],
  );
  assert.ok(dynamicImports("runtime/config/prechecked.ts").includes("runtime/config/user_config_load.ts"));
  // A webhook trigger's template check comes with a job that has trigger inputs.
  assert.ok(!run.includes("runtime/config/trigger_inputs.ts"));
  assert.ok(dynamicImports("runtime/config/prechecked.ts").includes("runtime/config/trigger_inputs.ts"));
  // output.schema's compilation is the turn's, once the model has answered (session/turn.ts): its module too.
  assert.ok(!run.includes("runtime/config/output_schema_check.ts"));
  assert.ok(dynamicImports("runtime/session/turn.ts").includes("runtime/config/output_schema_check.ts"));
  assert.ok(dynamicImports("runtime/config/prechecked.ts").includes("runtime/config/job_policy.ts"));
  // The guard sees them where they are imported statically.
  assert.deepEqual(
    closure(graph, ["runtime/config/job_policy.ts"]).filter((m) => policyChecks.includes(m)),
    policyChecks.toSorted(),
  );
});

Deno.test("start-up path: a job without a shell tool, http_fetch or anything sandboxed loads none of their modules", () => {
  // The session's tools and its sandbox probe: the shell tool (parser, policy, sandbox), http_fetch and the
  // probe (bubblewrap, seccomp, cgroups) are imported on use, for a job that has them.
  const run = closure(graph, ["runtime/session/live_session.ts", "runtime/tools/session.ts"]);
  const deferred = (m: string) =>
    m.startsWith("runtime/tools/shell/") || m === "runtime/tools/http_fetch.ts" ||
    ["probe", "sandbox", "launcher", "seccomp", "cgroup", "net_bridge"].some((n) =>
      m === `runtime/sandbox/${n}.ts`
    );
  assert.deepEqual(run.filter(deferred), []);
  // The guard sees them where they are imported statically.
  assert.ok(
    closure(graph, ["runtime/tools/shell/tool.ts"]).filter(deferred).includes("runtime/sandbox/sandbox.ts"),
  );
});

Deno.test("start-up path: a session's compactor loads its passes when one runs, not before the first request", () => {
  // Before each model call the compactor estimates; the ladder, summaries and commits are imported on use.
  const passes = (m: string) =>
    ["pass", "hard", "summary_call", "commit", "fallback_view", "proactive", "micro", "plan"].some((n) =>
      m === `runtime/compaction/${n}.ts`
    );
  assert.deepEqual(closure(graph, ["runtime/session/live_session.ts"]).filter(passes), []);
  assert.ok(
    closure(graph, ["runtime/compaction/pass.ts"]).filter(passes).includes(
      "runtime/compaction/summary_call.ts",
    ),
  );
});

Deno.test("start-up path: the guard sees the heavy modules a path does reach", () => {
  // json_schema.ts is ajv's door (an npm package); the full SQLite store reaches node:crypto.
  const ajv = heavy(closure(graph, ["runtime/config/json_schema.ts"]));
  assert.ok(ajv.some((m) => m.includes("ajv")), ajv.join("\n"));
  const store = heavy(closure(graph, ["runtime/store/sqlite/sqlite_store.ts"]), ["node:sqlite"]);
  assert.ok(store.includes("runtime/store/sqlite/sqlite_store.ts"), store.join("\n"));
  // A dynamic import is not followed: the dispatcher does not load its subcommands.
  assert.ok(!closure(graph, ["commands/sessions.ts"]).includes("commands/sessions/list.ts"));
});

Deno.test("start-up path: the OpenAI provider loads the WebSocket transport when a call uses it, not before", () => {
  const transport = (m: string) =>
    m === "runtime/providers/openai_ws.ts" || m === "runtime/providers/openai_ws_socket.ts";
  assert.deepEqual(closure(graph, ["runtime/providers/openai.ts"]).filter(transport), []);
  // The guard sees them where they are imported statically.
  assert.equal(closure(graph, ["runtime/providers/openai_ws.ts"]).filter(transport).length, 2);
});

Deno.test("start-up path: the App imports removing sessions and reading transcripts on use, not for a run", () => {
  const admin = (m: string) =>
    m === "runtime/session_admin/remove.ts" || m === "runtime/session_admin/transcript.ts";
  assert.deepEqual(closure(graph, ["runtime/app/app.ts"]).filter(admin), []);
  // The guard sees them where they are imported statically.
  assert.equal(
    closure(graph, ["runtime/session_admin/remove.ts", "runtime/session_admin/transcript.ts"]).filter(admin)
      .length,
    2,
  );
});

Deno.test("start-up path: a session checks for active loops without loading the loops' state modules", () => {
  const states = (m: string) => m === "loops/loop_state.ts" || m === "loops/heartbeat_state.ts";
  assert.deepEqual(closure(graph, ["loops/lazy_recurring.ts"]).filter(states), []);
  // The guard sees them where they are imported statically.
  assert.equal(closure(graph, ["loops/recurring.ts"]).filter(states).length, 2);
});

Deno.test("start-up path: a store loads the parts a run uses before its first request, the others on first use", () => {
  for (const backend of ["sqlite", "postgres"]) {
    // The parts its _parts.ts imports on use: none of their modules may come back through a static import.
    const lazy = dynamicImports(`runtime/store/${backend}/_parts.ts`);
    assert.ok(lazy.includes(`runtime/store/${backend}/run_queue.ts`), lazy.join("\n"));
    const opened = closure(graph, [`runtime/store/${backend}/${backend}_store.ts`]);
    assert.ok(opened.includes(`runtime/store/${backend}/messages.ts`), opened.join("\n"));
    assert.deepEqual(opened.filter((m) => lazy.includes(m)), []);
    // Nor what only they need: the run queue's shared rules, sessions' liveness.
    assert.deepEqual(
      opened.filter((m) =>
        m === "runtime/store/_run_queue.ts" || m === `runtime/store/${backend}/liveness.ts`
      ),
      [],
    );
  }
  // Opening a store does not bring the sessions lister (`sessions list` imports it when it lists).
  assert.deepEqual(closure(graph, ["runtime/store/open.ts"]).filter((m) => m.includes("list")), []);
  // The store's contract does not bring the queue's rules either, and a run takes its ids from ids.ts
  // without evaluating the contract (its interfaces are types; the module is some 50 KB).
  assert.ok(!closure(graph, ["runtime/store/store.ts"]).includes("runtime/store/_run_queue.ts"));
  const run = closure(graph, ["commands/run.ts", "runtime/app/run.ts", "runtime/session/live_session.ts"]);
  assert.ok(run.includes("runtime/store/ids.ts"), run.join("\n"));
  assert.ok(!run.includes("runtime/store/store.ts"), "a run evaluates runtime/store/store.ts");
  // The guard sees a part where another imports it statically (copying imports the compaction part).
  assert.ok(closure(graph, ["runtime/store/sqlite/copy.ts"]).includes("runtime/store/sqlite/compactions.ts"));
});

Deno.test("start-up path: hermes run builds the App without session administration, job references, the queue or telemetry", () => {
  // commands/_app.ts builds the App from app.ts: the App's face (mod.ts) re-exports searches, exports, prunes;
  // the App imports job references, stored-job admission, the queue's records and open sessions' views on
  // use; the command imports the GitHub outputs with the result and OpenTelemetry's door for a collector.
  const command = closure(graph, ["commands/run.ts"]);
  assert.ok(command.includes("runtime/app/app.ts"), command.join("\n"));
  const unused = (m: string) =>
    m.startsWith("runtime/session_admin/") ||
    [
      "runtime/app/mod.ts",
      "runtime/app/jobs.ts",
      "runtime/app/queue.ts",
      "runtime/app/stored_job.ts",
      "runtime/app/open_session.ts",
      "runtime/session/stored_job.ts",
    ].includes(m) ||
    m === "commands/_github.ts" || m === "runtime/telemetry/mod.ts";
  assert.deepEqual(command.filter(unused), []);
  // The guard sees them where they are imported statically.
  assert.deepEqual(
    closure(graph, ["runtime/app/mod.ts", "commands/_github.ts", "runtime/telemetry/mod.ts"]).filter(unused),
    [
      "commands/_github.ts",
      "runtime/app/jobs.ts",
      "runtime/app/mod.ts",
      "runtime/app/queue.ts",
      "runtime/session/stored_job.ts",
      "runtime/session_admin/export.ts",
      "runtime/session_admin/records.ts",
      "runtime/session_admin/search.ts",
      "runtime/telemetry/mod.ts",
    ],
  );
  // Views of open sessions come with the hub, which a run does not load.
  assert.ok(closure(graph, ["runtime/app/hub.ts"]).includes("runtime/app/open_session.ts"));
});

Deno.test("start-up path: a run's own worktree, delegation and loop state are imported by the runs that have them", () => {
  const unused = (m: string) =>
    m === "runtime/session/worktree.ts" || m === "runtime/app/delegate.ts" ||
    m === "loops/recurring_active.ts";
  assert.deepEqual(closure(graph, ["runtime/app/run.ts", "loops/lazy_recurring.ts"]).filter(unused), []);
  // The guard sees them where they are imported statically.
  assert.equal(
    closure(graph, ["runtime/session/worktree.ts", "runtime/app/delegate.ts", "loops/recurring_active.ts"])
      .filter(unused).length,
    3,
  );
});

Deno.test("start-up path: a session's own modules before its first request are these, and no more", () => {
  // What opening a session and its first turn evaluate of the session, agent, compaction, tools, providers
  // and sandbox folders, for a job with the OpenAI provider and file tools. Each module costs the path a
  // fraction of a millisecond: one that joins this list needs a reason its first request needs it. Loaded
  // on use instead: compaction's passes, telemetry, guard, floor and result cut; the agent's read dedup and
  // output ceiling; the provider wrappers (text tool calls, fallback), the Responses API and strict schemas;
  // the output.schema instruction and check; the read cap of read_file; the cassette's file writer.
  const ours = /^runtime\/(session|agent|compaction|tools|providers|sandbox)\//;
  const session = closure(graph, [
    "runtime/session/live_session.ts",
    "runtime/session/turn.ts",
    "runtime/tools/session.ts",
    "runtime/providers/openai.ts",
  ]).filter((m) => ours.test(m));
  assert.deepEqual(session, [
    "runtime/agent/_transcript.ts",
    "runtime/agent/agent.ts",
    "runtime/agent/limits.ts",
    "runtime/agent/real_window.ts",
    "runtime/agent/slash.ts",
    "runtime/agent/spend_cap.ts",
    "runtime/compaction/calibration.ts",
    "runtime/compaction/compactor.ts",
    "runtime/compaction/estimate.ts",
    "runtime/compaction/occupancy.ts",
    "runtime/compaction/rows.ts",
    "runtime/compaction/settings.ts",
    "runtime/compaction/summary.ts",
    "runtime/providers/_generated/openai.js",
    "runtime/providers/create.ts",
    "runtime/providers/model.ts",
    "runtime/providers/openai.ts",
    "runtime/providers/openai_api.ts",
    "runtime/providers/openai_responses_errors.ts",
    "runtime/providers/openai_sdk.ts",
    "runtime/providers/overload.ts",
    "runtime/providers/pricing.ts",
    "runtime/providers/progress.ts",
    "runtime/providers/provider.ts",
    "runtime/providers/registry.ts",
    "runtime/providers/retry_call.ts",
    "runtime/providers/server_window.ts",
    "runtime/providers/usage.ts",
    "runtime/sandbox/git_repo.ts",
    "runtime/session/instructions.ts",
    "runtime/session/live_session.ts",
    "runtime/session/outcome.ts",
    "runtime/session/outlets.ts",
    "runtime/session/owner_lease.ts",
    "runtime/session/secrets.ts",
    "runtime/session/turn.ts",
    "runtime/tools/builtin.ts",
    "runtime/tools/files.ts",
    "runtime/tools/gate.ts",
    "runtime/tools/paths.ts",
    "runtime/tools/session.ts",
    "runtime/tools/skill.ts",
    "runtime/tools/tool.ts",
  ]);
  // What moved off the path is still in the program (imported on use), under these names.
  const deferred = [
    "runtime/agent/read_dedup.ts",
    "runtime/agent/stored_output.ts",
    "runtime/compaction/cut.ts",
    "runtime/compaction/floor.ts",
    "runtime/compaction/guard.ts",
    "runtime/compaction/pass_outcome.ts",
    "runtime/compaction/telemetry.ts",
    "runtime/providers/fallback.ts",
    "runtime/providers/openai_responses.ts",
    "runtime/providers/strict_schema.ts",
    "runtime/providers/text_tool_calls.ts",
    "runtime/session/output_file.ts",
    "runtime/session/output_schema.ts",
    "runtime/tools/_capped.ts",
  ];
  assert.deepEqual(closure(graph, deferred).filter((m) => deferred.includes(m)), deferred);
});
