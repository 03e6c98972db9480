/**
 * What a run's own worktree costs (`workspace: {isolation: worktree}`, keep: on_change, so made and removed):
 * `hermes run JOB.yaml` through the real CLI on a repository of 500 files, against the same job without a
 * worktree (which holds the checkout's workspace lock instead), and `git worktree add` + `remove` alone;
 * interleaved A B C A B C in one run. Run: `deno run -A bench/worktree_bench.ts [rounds]`.
 */
import { interleave, ratio, report, spread } from "./_stats.ts";

const rounds = Number(Deno.args[0] ?? 15);
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-worktree-bench-" }));
const home = await Deno.makeTempDir({ prefix: "hermes-worktree-bench-home-" });

async function run(cmd: string, args: string[], cwd = dir): Promise<void> {
  const out = await new Deno.Command(cmd, { args, cwd, stdin: "null", stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

const job = (name: string, workspace: string) =>
  `name: ${name}\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: go\n` +
  `tools: { write_file: { paths: [.] } }\n${workspace}\n`;
await Deno.writeTextFile(`${dir}/plain.yaml`, job("plain", ""));
await Deno.writeTextFile(`${dir}/isolated.yaml`, job("isolated", "workspace: { isolation: worktree }"));
await Deno.writeTextFile(`${dir}/r.yaml`, "- content: done\n");
for (let i = 0; i < 500; i++) {
  await Deno.mkdir(`${dir}/src/m${i % 20}`, { recursive: true });
  await Deno.writeTextFile(`${dir}/src/m${i % 20}/f${i}.ts`, `export const v${i} = ${i};\n`.repeat(40));
}
await run("git", ["init", "-q"]);
await run("git", ["-c", "user.email=b@e", "-c", "user.name=b", "add", "."]);
await run("git", ["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-qm", "bench"]);

const timed = async (fn: () => Promise<void>) => {
  const started = performance.now();
  await fn();
  return performance.now() - started;
};
const hermes = (file: string) => () =>
  timed(() => run(Deno.execPath(), ["run", "-A", MAIN, "--home", home, "run", file]));
let n = 0;
const samples = await interleave({
  plain: hermes("plain.yaml"),
  worktree: hermes("isolated.yaml"),
  git: () =>
    timed(async () => {
      const path = `${home}/git-${n++}`;
      await run("git", ["worktree", "add", "--quiet", "-b", `bench-${n}`, path, "HEAD"]);
      await run("git", ["worktree", "remove", "--force", path]);
      await run("git", ["branch", "-D", "--quiet", `bench-${n}`]);
    }),
}, { rounds, warmup: 2 });

const delta = samples.worktree.map((ms, i) => ms - samples.plain[i]!);
report("hermes run, checkout (baseline)", spread(samples.plain));
report("hermes run, own worktree (made and removed)", spread(samples.worktree));
report("  worktree over baseline, per round", spread(delta));
report("  ratio", ratio(samples.worktree, samples.plain));
report("git worktree add + remove + branch -D alone", spread(samples.git));
await Deno.remove(dir, { recursive: true });
await Deno.remove(home, { recursive: true });
