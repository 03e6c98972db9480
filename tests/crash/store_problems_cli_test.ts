/** Store problems are one clear line naming the file; read commands work on a read-only store. */
import assert from "node:assert/strict";
import { hermes, MAIN, ROOT, tempDir, writeFiles } from "../_testing/cli.ts";

/** A home whose config.yaml picks a scripted model, with `runs` sessions in its store. */
async function homeWithSessions(runs: number): Promise<string> {
  const dir = await tempDir();
  await writeFiles(dir, {
    "r.yaml": "- content: an answer\n",
    "config.yaml": `model: { provider: scripted, script: ${dir}/r.yaml }\n`,
  });
  for (let i = 0; i < runs; i++) {
    const { code, stderr } = await hermes(["run", "-p", `prompt ${i} ${"x".repeat(20_000)}`], { home: dir });
    assert.equal(code, 0, stderr);
  }
  return dir;
}

async function output(command: Deno.Command) {
  const { code, stdout, stderr } = await command.output();
  return { code, stdout: new TextDecoder().decode(stdout), stderr: new TextDecoder().decode(stderr) };
}

/** `hermes ARGS` with `home` mounted read-only (bubblewrap), or null when this machine cannot do that. */
async function hermesReadOnly(home: string, args: string[]) {
  const bwrap = ["--dev-bind", "/", "/", "--ro-bind", home, home, Deno.execPath(), "run", "-A", MAIN];
  const command = (extra: string[]) =>
    new Deno.Command("bwrap", { args: [...bwrap, ...extra], cwd: ROOT, env: { NO_COLOR: "1" } });
  try {
    const probe = await output(command(["--version"]));
    if (probe.code !== 0) return null;
  } catch {
    return null;
  }
  return await output(command(["--home", home, ...args]));
}

Deno.test("a foreign (exit 2) or truncated (exit 1 when damaged) state.db is one line naming the file; a good one still works", async () => {
  const home = await homeWithSessions(3);
  const good = await hermes(["sessions", "list", "--json"], { home });
  assert.equal(good.code, 0);
  assert.equal(JSON.parse(good.stdout).length, 3);
  const db = `${home}/state.db`;
  const garbage = `${home}/garbage.db`;
  await Deno.writeTextFile(garbage, "this is not a database at all, just some text\n".repeat(100));
  const truncated = `${home}/truncated.db`;
  await Deno.copyFile(db, truncated);
  await Deno.truncate(truncated, 8192);
  for (
    const [file, problem] of [[garbage, /not a SQLite database/], [
      truncated,
      /damaged|not a SQLite/,
    ]] as const
  ) {
    for (const args of [["sessions", "list"], ["run", "-p", "hi"]]) {
      const { code, stdout, stderr } = await hermes([...args, "--db", file], { home });
      // A file that is not a SQLite store is bad input (the --db given names the wrong file); a damaged
      // store is a failure of the store.
      assert.equal(code, /not a SQLite database/.test(stderr) ? 2 : 1, stderr);
      if (file === garbage) assert.equal(code, 2);
      assert.equal(stdout, "");
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, new RegExp(`^hermes: Cannot use the store ${file}: `));
      assert.match(stderr, problem);
      assert.doesNotMatch(stderr, /internal error/);
    }
  }
});

Deno.test("a pre-existing empty state.db gets mode 0600 like a new one", async () => {
  const home = await homeWithSessions(0);
  await Deno.writeTextFile(`${home}/state.db`, "");
  await Deno.chmod(`${home}/state.db`, 0o644);
  const { code } = await hermes(["sessions", "list"], { home });
  assert.equal(code, 0);
  assert.equal((await Deno.stat(`${home}/state.db`)).mode! & 0o777, 0o600);
  const fresh = await tempDir();
  assert.equal((await hermes(["sessions", "list"], { home: fresh })).code, 0);
  assert.equal((await Deno.stat(`${fresh}/state.db`)).mode! & 0o777, 0o600);
});

Deno.test("on a read-only home, sessions list/show/search work and writes are a clear error", async (t) => {
  const home = await homeWithSessions(2);
  const list = await hermesReadOnly(home, ["sessions", "list", "--json"]);
  if (list === null) {
    t.step({ name: "skipped: bubblewrap cannot mount a read-only home here", ignore: true, fn: () => {} });
    return;
  }
  assert.equal(list.code, 0, list.stderr);
  const sessions = JSON.parse(list.stdout) as { id: string }[];
  assert.equal(sessions.length, 2);
  const show = await hermesReadOnly(home, ["sessions", "show", sessions[0]!.id]);
  assert.equal(show!.code, 0, show!.stderr);
  assert.match(show!.stdout, /an answer/);
  const search = await hermesReadOnly(home, ["sessions", "search", "prompt", "--json"]);
  assert.equal(search!.code, 0, search!.stderr);
  assert.equal(JSON.parse(search!.stdout).length, 2);
  const run = await hermesReadOnly(home, ["run", "-p", "hi"]);
  assert.equal(run!.code, 1);
  assert.match(run!.stderr, new RegExp(`^hermes: Cannot use the store ${home}/state.db: it is read-only`));
  const missing = await hermesReadOnly(home, ["--home", `${home}/nohome`, "sessions", "list"]);
  assert.equal(missing!.code, 1);
  assert.match(missing!.stderr, new RegExp(`^hermes: Cannot create the store ${home}/nohome/state.db: `));
});

Deno.test("a full disk (file-size limit) is an error naming the store", async (t) => {
  const home = await homeWithSessions(1);
  const big = `${home}/big.txt`;
  await Deno.writeTextFile(big, "y".repeat(600_000));
  // SIGXFSZ ignored, so a write beyond the limit fails with EFBIG as on a full disk.
  const script = `trap '' XFSZ; ulimit -f 200; exec "$0" run -A "$1" --home "$2" run -p - < "$3"`;
  let result;
  try {
    result = await output(
      new Deno.Command("bash", {
        args: ["-c", script, Deno.execPath(), MAIN, home, big],
        env: { NO_COLOR: "1" },
      }),
    );
  } catch {
    t.step({ name: "skipped: no bash to set a file-size limit", ignore: true, fn: () => {} });
    return;
  }
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    new RegExp(`^hermes: Cannot use the store ${home}/state.db: (a disk I/O error|the disk is full)`, "m"),
  );
  assert.doesNotMatch(result.stderr, /internal error/);
  // Under the limit the same store keeps working.
  const list = await hermes(["sessions", "list", "--json"], { home });
  assert.equal(list.code, 0);
});
