/**
 * A run's own git worktree through the real CLI and real bwrap (`workspace: {isolation: worktree}`): two
 * concurrent runs of a job that edits and commits the same file leave the main checkout untouched, each
 * with its own branch and commit, named in its result; a run that changes nothing leaves no worktree and
 * no branch (keep: on_change); `--worktree` does the same for a one-shot `-p` run.
 */
import assert from "node:assert/strict";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { type ChatRequestBody, startOpenAIServer, textOf } from "../_testing/openai_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";

async function git(dir: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command("git", {
    args: ["-C", dir, ...args],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  assert.ok(output.success, `git ${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`);
  return new TextDecoder().decode(output.stdout);
}

const EDIT = "date +%s%N | tee -a notes.txt && git commit -qam edit";

/** A repository whose job edits notes.txt and commits it (replies: scripted), all committed. */
async function repo(options: { workspace: string; replies: string }): Promise<string> {
  const dir = Deno.realPathSync(await tempDir("hermes-worktree-"));
  await writeFiles(dir, {
    "job.yaml": `name: edit
model: { provider: scripted, script: ./r.yaml }
prompt: edit the notes
tools: { shell: { allow: ["*"], sandbox: { write: [.] } } }
${options.workspace}
`,
    "r.yaml": options.replies,
    "notes.txt": "first line\n",
  });
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "config", "user.email", "test@example.com");
  await git(dir, "config", "user.name", "Test");
  await git(dir, "add", ".");
  await git(dir, "commit", "-qm", "start");
  return dir;
}

const EDIT_REPLIES = `- tool_calls: [{ name: shell, arguments: { command: ${JSON.stringify(EDIT)} } }]
- content: edited
`;

async function resultOf(child: Deno.ChildProcess) {
  const { code, stdout, stderr } = await child.output();
  const text = new TextDecoder().decode(stdout);
  return { code, stderr: new TextDecoder().decode(stderr), result: text.trim() ? JSON.parse(text) : null };
}

Deno.test({
  name: "worktree: two concurrent runs each commit on their own branch; the main checkout is untouched",
  ignore: withoutSandbox,
  async fn() {
    const dir = await repo({ workspace: "workspace: { isolation: worktree }", replies: EDIT_REPLIES });
    const home = await tempDir();
    try {
      const head = (await git(dir, "rev-parse", "HEAD")).trim();
      const runs = [0, 1].map(() =>
        spawnHermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home, stdin: "null" })
      );
      const [a, b] = await Promise.all(runs.map(resultOf));
      for (const run of [a!, b!]) {
        assert.equal(run.code, 0, run.stderr);
        const ws = run.result.workspace;
        assert.equal(ws.branch, `hermes/${run.result.session_id}`);
        assert.equal(ws.base, head);
        assert.equal(ws.commits.length, 1, JSON.stringify(ws));
        assert.deepEqual(ws.changed_files, ["notes.txt"]);
        assert.equal(ws.kept, true);
        assert.ok(ws.path.startsWith(`${Deno.realPathSync(home)}/worktrees/`), ws.path);
        // The branch holds the run's commit, which changed notes.txt.
        assert.equal((await git(dir, "rev-parse", ws.branch)).trim(), ws.commits[0]);
        assert.match(await git(dir, "show", `${ws.branch}:notes.txt`), /^first line\n\d+\n$/);
      }
      assert.notEqual(a!.result.workspace.branch, b!.result.workspace.branch);
      assert.notEqual(a!.result.workspace.commits[0], b!.result.workspace.commits[0]);
      // The main checkout: same commit, same file, nothing staged or changed.
      assert.equal((await git(dir, "rev-parse", "HEAD")).trim(), head);
      assert.equal(await Deno.readTextFile(`${dir}/notes.txt`), "first line\n");
      assert.equal(await git(dir, "status", "--porcelain"), "");
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "worktree: without isolation the same job commits in the checkout itself (the neighbour)",
  ignore: withoutSandbox,
  async fn() {
    const dir = await repo({ workspace: "", replies: EDIT_REPLIES });
    try {
      const head = (await git(dir, "rev-parse", "HEAD")).trim();
      const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
        cwd: dir,
        home: dir,
      });
      assert.equal(code, 0, stderr);
      assert.equal(JSON.parse(stdout).workspace, undefined);
      assert.notEqual((await git(dir, "rev-parse", "HEAD")).trim(), head);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("worktree: a run that changes nothing leaves no worktree and no branch (keep: on_change)", async () => {
  const dir = await repo({
    workspace: "workspace: { isolation: worktree }",
    replies: "- content: nothing to do\n",
  });
  const home = await tempDir();
  try {
    const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
      cwd: dir,
      home,
    });
    assert.equal(code, 0, stderr);
    const ws = JSON.parse(stdout).workspace;
    assert.deepEqual([ws.commits, ws.changed_files, ws.kept], [[], [], false]);
    assert.equal(await git(dir, "branch", "--list", ws.branch), "");
    assert.throws(() => Deno.statSync(ws.path));
    assert.ok(!(await git(dir, "worktree", "list")).includes(ws.path));
    // keep: always keeps it, unchanged as it is.
    await writeFiles(dir, {
      "job.yaml": (await Deno.readTextFile(`${dir}/job.yaml`)).replace(
        "isolation: worktree",
        "isolation: worktree, keep: always",
      ),
    });
    await git(dir, "commit", "-qam", "keep always");
    const kept = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home });
    assert.equal(kept.code, 0, kept.stderr);
    const ws2 = JSON.parse(kept.stdout).workspace;
    assert.equal(ws2.kept, true);
    assert.ok(Deno.statSync(ws2.path).isDirectory);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("worktree: --worktree gives a one-shot -p run its own worktree; outside a repository it is exit 2", async () => {
  const dir = await repo({ workspace: "", replies: "- content: done\n" });
  const home = await tempDir();
  const plain = await tempDir();
  try {
    await writeFiles(home, { "config.yaml": `model: { provider: scripted, script: ${dir}/r.yaml }\n` });
    const { code, stdout, stderr } = await hermes(["run", "-p", "hello", "--worktree", "--output", "json"], {
      cwd: dir,
      home,
    });
    assert.equal(code, 0, stderr);
    const ws = JSON.parse(stdout).workspace;
    assert.equal(ws.branch, `hermes/${JSON.parse(stdout).session_id}`);
    assert.equal(ws.kept, false);
    const outside = await hermes(["run", "-p", "hello", "--worktree"], { cwd: plain, home });
    assert.equal(outside.code, 2, outside.stderr);
    assert.match(
      outside.stderr,
      /^hermes: Cannot give the run its own worktree .* is not in a git repository$/m,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(home, { recursive: true });
    await Deno.remove(plain, { recursive: true });
  }
});

/** A job that edits notes.txt, then waits (its shell sleeps) so that a second run starts meanwhile. */
const SLOW_REPLIES = `- tool_calls: [{ name: shell, arguments: { command: "touch started && sleep 3" } }]
- content: done
`;

async function waitFor(path: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      Deno.statSync(path);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`${path} never appeared`);
}

Deno.test({
  name:
    "one writer per checkout: without isolation the second run exits 2 workspace_busy; the first finishes",
  ignore: withoutSandbox,
  async fn() {
    const dir = await repo({ workspace: "", replies: SLOW_REPLIES });
    const home = await tempDir();
    try {
      const first = spawnHermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home });
      await waitFor(`${dir}/started`);
      const second = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home });
      assert.equal(second.code, 2, second.stderr);
      const refused = JSON.parse(second.stdout);
      assert.equal(refused.terminal_reason, "workspace_busy");
      assert.equal(refused.turns, 0);
      const a = await resultOf(first);
      assert.equal(a.code, 0, a.stderr);
      assert.match(
        refused.error,
        new RegExp(`session ${a.result.session_id} \\(pid \\d+ on .+\\) is writing`),
      );
      // Once the first has ended the checkout is free again.
      await Deno.remove(`${dir}/started`);
      await writeFiles(dir, { "r.yaml": "- content: done\n" });
      const third = await hermes(["run", "job.yaml"], { cwd: dir, home });
      assert.equal(third.code, 0, third.stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "one writer per checkout: shared: true runs alongside, and so does a job that cannot write",
  ignore: withoutSandbox,
  async fn() {
    const dir = await repo({ workspace: "", replies: SLOW_REPLIES });
    const home = await tempDir();
    try {
      const first = spawnHermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home });
      await waitFor(`${dir}/started`);
      await writeFiles(dir, {
        "shared.yaml": "name: shared\nmodel: { provider: scripted, script: ./done.yaml }\nprompt: go\n" +
          "tools: { write_file: { paths: [.] } }\nworkspace: { shared: true }\n",
        "reader.yaml": "name: reader\nmodel: { provider: scripted, script: ./done.yaml }\nprompt: go\n" +
          "tools: { read_file: { paths: [.] } }\n",
        "done.yaml": "- content: done\n",
      });
      for (const job of ["shared.yaml", "reader.yaml"]) {
        const run = await hermes(["run", job], { cwd: dir, home });
        assert.equal(run.code, 0, `${job}: ${run.stderr}`);
      }
      const a = await resultOf(first);
      assert.equal(a.code, 0, a.stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "one writer per checkout: the lock of a SIGKILLed run is taken over",
  ignore: withoutSandbox,
  async fn() {
    const dir = await repo({ workspace: "", replies: SLOW_REPLIES.replace("sleep 3", "sleep 60") });
    const home = await tempDir();
    try {
      const first = spawnHermes(["run", "job.yaml"], { cwd: dir, home });
      await waitFor(`${dir}/started`);
      first.kill("SIGKILL");
      await first.output();
      await writeFiles(dir, { "r.yaml": "- content: done\n" });
      const next = await hermes(["run", "job.yaml"], { cwd: dir, home });
      assert.equal(next.code, 0, next.stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "worktree: sessions delete keeps the worktree without a terminal, --remove-worktree removes it",
  ignore: withoutSandbox,
  async fn() {
    const dir = await repo({ workspace: "workspace: { isolation: worktree }", replies: EDIT_REPLIES });
    const home = await tempDir();
    try {
      const ids: { id: string; path: string; branch: string }[] = [];
      for (let i = 0; i < 2; i++) {
        const run = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home });
        assert.equal(run.code, 0, run.stderr);
        const { session_id, workspace } = JSON.parse(run.stdout);
        ids.push({ id: session_id, path: workspace.path, branch: workspace.branch });
      }
      const [kept, removed] = ids;
      const first = await hermes(["sessions", "delete", kept!.id], { home });
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stderr, new RegExp(`kept the worktree ${kept!.path} of session ${kept!.id}`));
      assert.ok(Deno.statSync(kept!.path).isDirectory);
      const second = await hermes(["sessions", "delete", removed!.id, "--remove-worktree"], { home });
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, /removed the worktree .*; its branch .* keeps the run's commits/);
      assert.throws(() => Deno.statSync(removed!.path));
      // The run's commit is still on its branch.
      assert.equal((await git(dir, "log", "-1", "--format=%s", removed!.branch)).trim(), "edit");
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "worktree: a resumed session works in its worktree again, checked out anew when it was removed",
  ignore: withoutSandbox,
  async fn() {
    // The first run stops after its first step (max_turns), having committed; the resume finishes it.
    const dir = await repo({
      workspace: "workspace: { isolation: worktree, keep: never }\nsteps: [again]",
      replies: `${EDIT_REPLIES}${EDIT_REPLIES.replace("edited", "edited again")}`,
    });
    const home = await tempDir();
    try {
      const run = await hermes(["run", "job.yaml", "--output", "json", "--max-turns", "1"], {
        cwd: dir,
        home,
      });
      const first = JSON.parse(run.stdout);
      assert.equal(first.terminal_reason, "max_turns", run.stderr);
      assert.equal(first.workspace.kept, false);
      assert.throws(() => Deno.statSync(first.workspace.path));
      const resumed = await hermes(["run", "--resume", first.session_id, "--output", "json"], {
        cwd: dir,
        home,
      });
      // It ends as the first did (the stored job's max_turns); what matters here is where it worked.
      const second = JSON.parse(resumed.stdout);
      assert.match(resumed.stderr, /tool shell → ok/);
      assert.equal(second.workspace.branch, first.workspace.branch);
      assert.equal(second.workspace.path, first.workspace.path);
      // The branch holds the first run's commit and the resumed run's; the main checkout is untouched.
      assert.ok(second.workspace.commits.length >= 2, JSON.stringify(second.workspace));
      assert.equal(second.workspace.commits[0], first.workspace.commits[0]);
      assert.equal(await Deno.readTextFile(`${dir}/notes.txt`), "first line\n");
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "worktree: the run cannot write the main checkout nor its .git hooks and config; it commits on its branch",
  ignore: withoutSandbox,
  async fn() {
    const probe = (path: string) =>
      `(echo x | tee ${path} >/dev/null 2>&1 && echo "wrote ${path}" || echo "refused ${path}")`;
    const dir = await repo({
      workspace: "workspace: { isolation: worktree }",
      replies: "- content: placeholder\n",
    });
    const home = await tempDir();
    try {
      const command = [
        probe(`${dir}/notes.txt`),
        probe(`${dir}/.git/hooks/post-checkout`),
        probe(`${dir}/.git/config`),
        probe("inside.txt"),
        "git add inside.txt && git commit -qm inside && echo committed",
      ].join("; ");
      await writeFiles(dir, {
        "r.yaml": `- tool_calls: [{ name: shell, arguments: { command: ${
          JSON.stringify(command)
        } } }]\n- content: done\n`,
      });
      await git(dir, "commit", "-qam", "probe replies");
      const config = await Deno.readTextFile(`${dir}/.git/config`);
      const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "stream-json"], {
        cwd: dir,
        home,
      });
      assert.equal(code, 0, stderr);
      const events = stdout.trim().split("\n").map((line) => JSON.parse(line));
      const output = String(events.find((e) => e.type === "tool.result")?.content ?? "");
      // The main checkout's files: under /tmp (as here) the sandbox's private /tmp takes the write, elsewhere
      // the read-only host refuses it; either way the checkout's file is unchanged (below).
      assert.match(output, /refused .*\.git\/hooks\/post-checkout/, output);
      assert.match(output, /refused .*\.git\/config/, output);
      assert.match(output, /wrote inside\.txt/, output);
      assert.match(output, /committed/, output);
      assert.equal(await Deno.readTextFile(`${dir}/notes.txt`), "first line\n");
      assert.equal(await Deno.readTextFile(`${dir}/.git/config`), config);
      const result = events.at(-1)!;
      assert.deepEqual((result.workspace as { changed_files: string[] }).changed_files, ["inside.txt"]);
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "worktree: agents with workspace isolation: worktree — two tasks committing at once each on its own branch",
  ignore: withoutSandbox,
  async fn() {
    const userOf = (body: ChatRequestBody) => textOf(body.messages?.find((m) => m.role === "user")?.content);
    const tools = (body: ChatRequestBody) => (body.messages ?? []).filter((m) => m.role === "tool");
    const server = await startOpenAIServer({
      respond: (body): ScriptEntry => {
        const task = userOf(body);
        if (task.startsWith("task")) {
          return tools(body).length === 0
            ? { tool_calls: [{ name: "shell", arguments: { command: EDIT } }] }
            : { content: `${task} edited` };
        }
        return tools(body).length === 0
          ? {
            tool_calls: [1, 2].map((n) => ({
              id: `call_${n}`,
              name: "delegate",
              arguments: { agent: "editor", prompt: `task ${n}` },
            })),
          }
          : { content: tools(body).map((m) => textOf(m.content)).join("\n---\n") };
      },
    });
    const dir = Deno.realPathSync(await tempDir("hermes-worktree-"));
    const home = await tempDir();
    try {
      await writeFiles(dir, {
        "job.yaml": `name: edit
model: { provider: openai, name: m }
prompt: edit the notes
tools: { shell: { allow: ["*"], sandbox: { write: [.] } } }
agents:
  editor:
    description: Edits the notes
    workspace: { isolation: worktree }
`,
        "notes.txt": "first line\n",
      });
      await git(dir, "init", "-q", "-b", "main");
      await git(dir, "config", "user.email", "test@example.com");
      await git(dir, "config", "user.name", "Test");
      await git(dir, "add", ".");
      await git(dir, "commit", "-qm", "start");
      const head = (await git(dir, "rev-parse", "HEAD")).trim();
      const run = await hermes(["run", "job.yaml", "--output", "json"], {
        cwd: dir,
        home,
        env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, HOME: home },
      });
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.equal(result.workspace, undefined, "the run itself works in the checkout");
      assert.equal(result.agents.length, 2);
      const branches = new Set<string>();
      for (const agent of result.agents) {
        const ws = agent.workspace;
        assert.equal(agent.status, "success");
        assert.equal(ws.branch, `hermes/${agent.session_id}`);
        assert.equal(ws.base, head);
        assert.equal(ws.commits.length, 1, JSON.stringify(ws));
        assert.deepEqual(ws.changed_files, ["notes.txt"]);
        assert.ok(ws.path.startsWith(`${Deno.realPathSync(home)}/worktrees/`), ws.path);
        assert.match(await git(dir, "show", `${ws.branch}:notes.txt`), /^first line\n\d+\n$/);
        // The delegating model is told where the task's work is.
        assert.ok(result.final.includes(`worked on branch ${ws.branch}`), result.final);
        branches.add(ws.branch);
      }
      assert.equal(branches.size, 2);
      // The checkout the run works in: same commit, same file, nothing staged or changed.
      assert.equal((await git(dir, "rev-parse", "HEAD")).trim(), head);
      assert.equal(await Deno.readTextFile(`${dir}/notes.txt`), "first line\n");
      assert.equal(await git(dir, "status", "--porcelain"), "");
    } finally {
      await server.close();
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});
