/**
 * The sandbox's second round of boundaries through `hermes run` and the real bwrap, each attack next to
 * its allowed case: hidden homes and credentials, a CI checkout's token in .git/config, a repository
 * under /tmp, host unix sockets, a fork bomb and a /tmp filler, a plugin host list next to `run`, and a
 * sandbox that cannot start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { processCap, sandboxTests } from "../../runtime/sandbox/_testing.ts";

const { ignore, probe } = await sandboxTests("sandbox v2 CLI tests");
/** Tests give the CLI its own $HOME; Deno's cache stays where it is (else every run downloads again). */
const DENO_DIR = Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/", ".cache/deno");

/** A job whose scripted model runs each command with the shell tool, then answers "done". */
function shellJob(commands: string[], sandbox = "", timeout = "30s"): Record<string, string> {
  const replies =
    commands.map((command) =>
      `- tool_calls: [{ name: shell, arguments: { command: ${JSON.stringify(command)} } }]\n`
    ).join("") + "- content: done\n";
  return {
    "job.yaml": `name: sandbox-v2
model: { provider: scripted, script: ./replies.yaml }
prompt: Go.
tools:
  shell: { timeout: ${timeout}${sandbox ? `, sandbox: ${sandbox}` : ""} }
`,
    "replies.yaml": replies,
  };
}

/** `hermes run job.yaml --output stream-json` in `cwd`; the shell results in order. */
async function run(cwd: string, options: { args?: string[]; env?: Record<string, string> } = {}) {
  const r = await hermes(["run", "job.yaml", "--output", "stream-json", ...(options.args ?? [])], {
    cwd,
    env: { DENO_DIR, ...options.env },
  });
  const events = r.stdout.trim() === "" ? [] : r.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const results = events.filter((e) => e.type === "tool.result").map((e) => String(e.content));
  return { ...r, events, results };
}

function cliTest(name: string, fn: (dir: string) => Promise<void>): void {
  Deno.test({
    name: `sandbox v2 (CLI): ${name}`,
    ignore,
    async fn() {
      const dir = await Deno.realPath(await tempDir("hermes-v2-"));
      try {
        await fn(dir);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

cliTest("the Hermes home is hidden however it was chosen; credentials too; other files read", async (dir) => {
  const home = join(dir, "user");
  await writeFiles(home, {
    ".pgpass": "db:5432:*:postgres:PGPASS-SECRET\n",
    ".my.cnf": "[client]\npassword=MYCNF-SECRET\n",
    ".claude/.credentials.json": '{"token":"CLAUDE-SECRET"}',
    ".config/rclone/rclone.conf": "[s3]\nsecret_access_key = RCLONE-SECRET\n",
    ".docker/config.json": '{"auths":{"x":{"auth":"DOCKER-SECRET"}}}',
    ".hermes/config.yaml": "limits: { max_turns: 40 } # DEFAULT-HOME-MARKER\n",
    "notes.txt": "ordinary notes\n",
  });
  await writeFiles(dir, {
    "flag-home/config.yaml": "limits: { max_turns: 40 } # FLAG-HOME-MARKER\n",
    "env-home/config.yaml": "limits: { max_turns: 40 } # ENV-HOME-MARKER\n",
  });
  const secrets = [
    ".pgpass",
    ".my.cnf",
    ".claude/.credentials.json",
    ".config/rclone/rclone.conf",
    ".docker/config.json",
  ]
    .map((name) => `${home}/${name}`);
  const cat = (path: string) => `cat ${path} 2>&1; true`;
  const job = join(dir, "job");
  await writeFiles(
    job,
    shellJob([
      ...secrets.map(cat),
      cat(`${dir}/flag-home/config.yaml`),
      cat(`${dir}/env-home/config.yaml`),
      cat(`${home}/.hermes/config.yaml`),
      `cat ${home}/notes.txt`,
      `head -c 15 ${dir}/elsewhere/state.db 2>&1; true`,
      // The whole test directory is granted (it lies in /tmp, private otherwise): what stays hidden is
      // hidden by the rules, not by /tmp being private.
    ], `{ read: [".", ${JSON.stringify(dir)}] }`),
  );
  const env = { HOME: home };
  // --home, HERMES_HOME, then the default ~/.hermes: each run hides the home it uses.
  const byFlag = await run(job, { args: ["--home", `${dir}/flag-home`], env });
  const byEnv = await run(job, { env: { ...env, HERMES_HOME: `${dir}/env-home` } });
  const byDefault = await run(job, { env });
  // A store given with --db elsewhere is hidden too, and only while it is the one in use.
  await Deno.mkdir(join(dir, "elsewhere"));
  const made = await hermes(["sessions", "list", "--db", `${dir}/elsewhere/state.db`], { env: { DENO_DIR } });
  assert.equal(made.code, 0, made.stderr);
  const byDb = await run(job, { args: ["--db", `${dir}/elsewhere/state.db`], env });
  const another = await run(job, { env });
  assert.doesNotMatch(byDb.results[9]!, /SQLite format/, "the store in use is hidden");
  assert.match(another.results[9]!, /SQLite format 3/, "a store not in use is an ordinary file");
  for (const [r, hidden] of [[byFlag, 5], [byEnv, 6], [byDefault, 7], [byDb, 7]] as const) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.results.length, 10, r.stdout);
    for (const result of r.results.slice(0, 5)) {
      assert.doesNotMatch(result, /SECRET/, "credentials are hidden");
    }
    assert.doesNotMatch(r.results[hidden]!, /MARKER/, "the home in use is hidden");
    assert.match(r.results[8]!, /ordinary notes/, `other files in $HOME are read: ${r.results.join("|")}`);
  }
  // Homes not in use are ordinary directories.
  assert.match(byFlag.results[6]!, /ENV-HOME-MARKER/);
  assert.match(byEnv.results[5]!, /FLAG-HOME-MARKER/);
});

cliTest(
  "a checkout token in .git/config is not readable; git works; granting the file shows it",
  async (dir) => {
    const git = async (...args: string[]) => {
      const out = await new Deno.Command("git", { args, cwd: dir, stdout: "null", stderr: "piped" }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    };
    await git("init", "-q");
    await git(
      "config",
      "http.https://github.com/.extraheader",
      "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hz",
    );
    await git("config", "remote.origin.url", "https://x-access-token:ghs_CHECKOUT@github.com/o/r.git");
    await git("config", "credential.helper", "store --file /tmp/creds-CHECKOUT");
    // The job sits in a subfolder of a repository under /tmp: it sees the whole worktree.
    await writeFiles(dir, { "README.md": "top\n" });
    const job = join(dir, "sub");
    await writeFiles(
      job,
      shellJob(["cat ../.git/config", "git config --get remote.origin.url", "git status --short"]),
    );
    const r = await run(job, { env: { HOME: dir } });
    assert.equal(r.code, 0, r.stderr);
    const [config, url, status] = r.results;
    assert.doesNotMatch(config!, /extraheader|eC1hY2Nlc3M|ghs_CHECKOUT|creds-CHECKOUT/i);
    assert.match(config!, /\[remote "origin"\]/);
    assert.equal(url, "https://github.com/o/r.git\n");
    assert.match(status!, /\?\? \.\.\/README\.md/, "git status sees the repository");
    assert.equal(
      await Deno.readTextFile(join(dir, ".git/config")).then((t) => t.includes("ghs_CHECKOUT")),
      true,
    );
    // The job may grant the file itself.
    await writeFiles(job, shellJob(["cat ../.git/config"], `{ read: ["..", "../.git/config"] }`));
    const granted = await run(job, { env: { HOME: dir } });
    assert.equal(granted.code, 0, granted.stderr);
    assert.match(granted.results[0]!, /ghs_CHECKOUT/);
  },
);

cliTest(
  "a host socket file in the job directory is refused without the network, reached with it",
  async (dir) => {
    const listener = Deno.listen({ transport: "unix", path: join(dir, "db.sock") });
    let accepted = 0;
    const serving = (async () => {
      for await (const conn of listener) {
        accepted++;
        await conn.write(new TextEncoder().encode("host says hi\n")).catch(() => {});
        conn.close();
      }
    })().catch(() => {});
    try {
      const connect = `perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n"; ` +
        `connect($s, pack_sockaddr_un("db.sock")) or die "connect: $!\\n"; print scalar <$s>'`;
      await writeFiles(dir, shellJob([connect]));
      const refused = await run(dir, { env: { HOME: dir } });
      assert.equal(refused.code, 0, refused.stderr);
      assert.match(refused.results[0]!, /socket: Operation not permitted/);
      assert.equal(accepted, 0);
      await writeFiles(dir, shellJob([connect], "{ net: true }"));
      const allowed = await run(dir, { env: { HOME: dir } });
      assert.match(allowed.results[0]!, /host says hi/);
      assert.equal(accepted, 1);
    } finally {
      listener.close();
      await serving;
    }
  },
);

cliTest("a fork bomb and a /tmp filler are stopped; the next command runs", async (dir) => {
  const processes = processCap(probe, 64);
  if (processes === null) {
    console.warn(
      "fork bomb part skipped: running as root without a writable pids cgroup, nothing caps processes",
    );
  }
  await writeFiles(
    dir,
    shellJob(
      [
        // Not started where nothing would stop it.
        processes === null ? "echo no process cap here" : "perl -e 'fork while 1'",
        "dd if=/dev/zero of=/tmp/fill bs=1M count=40",
        "echo still working",
      ],
      `{ limits: { processes: ${processes ?? 512}, tmp: 16MiB } }`,
      "3s",
    ),
  );
  const r = await run(dir, { env: { HOME: dir } });
  assert.equal(r.code, 0, r.stderr);
  const [bomb, filler, normal] = r.results;
  if (processes !== null) assert.match(bomb!, /timed out after 3s \(killed\)/);
  assert.match(filler!, /No space left on device/);
  assert.equal(normal, "still working\n");
});

cliTest(
  "a plugin with a host list and run loads in the sandbox; with sandbox: off it is refused",
  async (dir) => {
    const job = (entry: string) =>
      `name: plugin-net
model: { provider: scripted, script: ./replies.yaml }
prompt: Hello.
plugins:
  - { path: ./quiet.js, ${entry} }
`;
    await writeFiles(dir, {
      "quiet.js": "export function register(ctx) {}\n",
      "replies.yaml": "- content: Hi.\n",
      "job.yaml": job(`sandbox: off, permissions: { net: ["example.com:443"], run: ["git"] }`),
    });
    const refused = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /permissions\.net lists hosts \(example\.com:443\) but permissions\.run is granted too, and with sandbox: off/,
    );
    assert.equal(refused.stdout, "");
    await Deno.writeTextFile(
      join(dir, "job.yaml"),
      job(`permissions: { net: ["example.com:443"], run: ["git"] }`),
    );
    const allowed = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.stdout, "Hi.\n");
  },
);

Deno.test("sandbox v2 (CLI): a sandbox that cannot start names the blocker in doctor and the run (exit 2)", async () => {
  const dir = await tempDir("hermes-v2-");
  try {
    // A bubblewrap that fails the way it does under Ubuntu's AppArmor restriction or in Docker.
    await writeFiles(dir, {
      ...shellJob(["echo never"]),
      "bwrap": `#!/bin/sh\ncase "$1" in --version) echo "bubblewrap 0.9.0";; ` +
        `*) echo "bwrap: setting up uid map: Permission denied" >&2; exit 1;; esac\n`,
    });
    await Deno.chmod(join(dir, "bwrap"), 0o755);
    const env = { HERMES_BWRAP: join(dir, "bwrap") };
    const doctor = await hermes(["doctor", "--json"], { home: dir, env });
    const sandbox = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === "sandbox");
    assert.equal(sandbox.ok, false);
    assert.match(sandbox.detail, /setting up uid map: Permission denied — /);
    assert.match(sandbox.hint, /user namespaces|AppArmor|seccomp=unconfined/);
    const r = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^hermes: Cannot run the shell tool in its OS sandbox: .*uid map.*sandbox: off/);
    const result = JSON.parse(r.stdout);
    assert.deepEqual([result.exit_code, result.terminal_reason, result.turns], [2, "invalid_input", 0]);
    assert.match(
      result.error,
      /uid map: Permission denied — this host does not let bwrap create user namespaces/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sandbox v2 (CLI): an MCP server whose sandbox cannot start is exit 2 before any model call", async () => {
  const dir = await tempDir("hermes-v2-");
  try {
    const job = (sandbox: string) =>
      `name: mcp-nosandbox
model: { provider: scripted, script: ./replies.yaml }
prompt: Hello.
mcp_servers:
  quiet: { command: "true"${sandbox} }
`;
    await writeFiles(dir, { "job.yaml": job(""), "replies.yaml": "- content: Hi.\n" });
    const env = { HERMES_BWRAP: join(dir, "no-bwrap-here") };
    const r = await hermes(["run", "job.yaml"], { cwd: dir, home: dir, env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^hermes: MCP server "quiet": Cannot start an MCP server in its OS sandbox: .*`sandbox: off` on the server/,
    );
    assert.equal(r.stdout, "");
    // The explicit opt-out runs (the server itself then fails to speak MCP: a warning, not a stop).
    await Deno.writeTextFile(join(dir, "job.yaml"), job(", sandbox: off"));
    const off = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
    assert.equal(off.code, 0, off.stderr);
    assert.equal(JSON.parse(off.stdout).sandbox, "off");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
