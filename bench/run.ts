/** `deno task bench`: runs every benchmark script in bench/ one after another (they share 2 cores badly). */
const scripts = [
  "startup_bench.ts",
  "turn_bench.ts",
  "responses_ws_bench.ts",
  "core_bench.ts",
  "compaction_bench.ts",
  "plugins_bench.ts",
  "rpc_bench.ts",
  "sessions_bench.ts",
  "cost_bench.ts",
  "store_bench.ts",
  "sandbox_bench.ts",
  "http_fetch_bench.ts",
  "micro_compaction_bench.ts",
  "corpus_compaction_bench.ts",
  "mcp_bench.ts",
  "daemon_bench.ts",
  "replay_bench.ts",
  "worktree_bench.ts",
  "delegate_bench.ts",
  "postgres_turn_bench.ts",
  "postgres_daemon_bench.ts",
  "console_bench.ts",
];
const only = Deno.args;
for (const script of scripts) {
  if (only.length && !only.some((name) => script.startsWith(name))) continue;
  const path = new URL(script, import.meta.url).pathname;
  try {
    Deno.statSync(path);
  } catch {
    continue;
  }
  console.log(`\n## ${script}`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", path],
    stdout: "inherit",
    stderr: "inherit",
  })
    .output();
  if (code !== 0) console.log(`(${script} exited ${code})`);
}
