/** The CLI edge: --version, --help, unknown commands and flags. */
import assert from "node:assert/strict";
import { VERSION } from "../../runtime/core/version.ts";
import { hermes, ROOT } from "../_testing/cli.ts";

/** HEAD of this checkout as `git` says, or null outside a git checkout (a copied tree). */
async function gitHead(): Promise<string | null> {
  const out = await new Deno.Command("git", {
    args: ["rev-parse", "--short=12", "HEAD"],
    cwd: ROOT,
    stderr: "null",
  })
    .output().catch(() => null);
  return out?.success ? new TextDecoder().decode(out.stdout).trim() : null;
}

Deno.test("--version prints the version and the commit (read from .git, no git process) and exits 0", async () => {
  const { code, stdout } = await hermes(["--version"]);
  assert.equal(code, 0);
  const head = await gitHead();
  assert.equal(stdout, head ? `hermes ${VERSION} (${head})\n` : `hermes ${VERSION}\n`);
});

Deno.test("--help lists every command on stdout; no command at all is exit 2 on stderr", async () => {
  const help = await hermes(["--help"]);
  assert.equal(help.code, 0);
  for (const command of ["run", "validate", "schema", "sessions", "daemon", "plugins", "rpc", "acp"]) {
    assert.match(help.stdout, new RegExp(`hermes ${command}`));
  }
  const none = await hermes([]);
  assert.equal(none.code, 2);
  assert.equal(none.stdout, "");
  assert.match(none.stderr, /Usage:/);
});

Deno.test("COMMAND --help prints that command's usage and exits 0", async () => {
  const { code, stdout } = await hermes(["run", "--help"]);
  assert.equal(code, 0);
  assert.match(stdout, /hermes run JOB\.yaml/);
  assert.doesNotMatch(stdout, /hermes daemon/);
});

Deno.test("an unknown command or --log-level is exit 2 with one line", async () => {
  const unknown = await hermes(["frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^hermes: unknown command "frobnicate": expected one of run, /);
  assert.equal(unknown.stderr.trim().split("\n").length, 1);
  const level = await hermes(["--log-level", "loud", "schema"]);
  assert.equal(level.code, 2);
  assert.match(level.stderr, /invalid --log-level "loud"/);
});

Deno.test("a mistyped flag or command is one line with a did-you-mean and no doubled prefix", async () => {
  const flag = await hermes(["run", "x.yaml", "--outptu", "json"]);
  assert.equal(flag.code, 2);
  assert.equal(flag.stderr, 'hermes run: unknown flag "--outptu" (did you mean "--output"?)\n');
  const sub = await hermes(["sessions", "list", "--jsn"]);
  assert.equal(sub.code, 2);
  assert.equal(sub.stderr, 'hermes sessions list: unknown flag "--jsn" (did you mean "--json"?)\n');
  const far = await hermes(["validate", "--frobnicate"]);
  assert.equal(far.stderr, 'hermes validate: unknown flag "--frobnicate"\n');
  const command = await hermes(["sessons", "list"]);
  assert.equal(command.code, 2);
  assert.match(
    command.stderr,
    /^hermes: unknown command "sessons" \(did you mean "sessions"\?\): expected one of /,
  );
  assert.equal(command.stderr.trim().split("\n").length, 1);
  const subcommand = await hermes(["sessions", "lsit"]);
  assert.match(subcommand.stderr, /^hermes: unknown command "sessions lsit" \(did you mean "list"\?\)/);
  const missing = await hermes(["run", "--output"]);
  assert.equal(missing.stderr, "hermes run: --output needs a value\n");
  // The correctly spelled flag still works.
  const ok = await hermes(["schema", "--quiet"]);
  assert.equal(ok.code, 0);
});

Deno.test("-V is --version; `hermes help CMD` is `hermes CMD --help`", async () => {
  const short = await hermes(["-V"]);
  assert.equal(short.code, 0);
  assert.match(
    short.stdout,
    new RegExp(`^hermes ${VERSION.replaceAll(".", "\\.")}( \\([0-9a-f]{12}\\))?\n$`),
  );
  for (const command of ["run", "validate", "daemon", "plugins", "rpc", "sessions"]) {
    const viaHelp = await hermes(["help", command]);
    const viaFlag = await hermes([command, "--help"]);
    assert.equal(viaHelp.code, 0, viaHelp.stderr);
    assert.equal(viaHelp.stdout, viaFlag.stdout);
  }
  const prune = await hermes(["help", "sessions", "prune"]);
  assert.equal(prune.stdout, (await hermes(["sessions", "prune", "--help"])).stdout);
  const unknown = await hermes(["help", "sessons"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /did you mean "sessions"/);
});

Deno.test("every command's help lists each of its flags, short forms included, with a description", async () => {
  const expected: Record<string, string[]> = {
    run: [
      "-p, --prompt",
      "-i, --input",
      "-o, --output",
      "-r, --resume",
      "-m, --model",
      "--max-turns",
      "--timeout",
      "--tools",
      "--allow",
    ],
    validate: ["--json"],
    daemon: ["--grace", "--json"],
    rpc: ["--max-line"],
    "sessions list": ["--json", "--job", "--status", "--since", "--archived", "--limit"],
    "sessions prune": ["--older-than", "--job", "--dry-run", "-y, --yes", "--json"],
    "sessions export": ["--format", "-o, --output"],
  };
  for (const [command, flags] of Object.entries(expected)) {
    const { code, stdout } = await hermes([...command.split(" "), "--help"]);
    assert.equal(code, 0);
    for (
      const flag of [...flags, "--home", "--db", "--log-level", "-q, --quiet", "-h, --help", "-V, --version"]
    ) {
      const line = stdout.split("\n").find((l) => /^\s+-/.test(l) && (l.includes(`${flag} `)));
      assert.ok(line, `${command} --help lists ${flag}`);
      assert.match(line, new RegExp(`${flag.replace(/[-]/g, "\\-")}(\\s+[A-Z|=.a-z0-9]+)?\\s{2,}\\S`), line);
    }
  }
  const sessions = await hermes(["help", "sessions"]);
  for (const flag of ["--older-than", "--dry-run", "--focus", "--archived", "--sort"]) {
    assert.match(sessions.stdout, new RegExp(flag));
  }
});
