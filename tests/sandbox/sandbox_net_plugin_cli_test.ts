/**
 * A plugin's host list holds for its whole process tree (`hermes run`, real bwrap, bridge and proxy): the
 * plugin's own fetch and a curl it runs reach the granted local server through the proxy; the other server
 * gets 403 from either; a child ignoring the proxy has no route; the host's abstract socket stays out of
 * reach of a child too.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { netTargets } from "../../runtime/sandbox/_testing.ts";

const PLUGIN = `export function register(ctx) {
  const run = async (args) => {
    const out = await new Deno.Command(args[0], { args: args.slice(1), stdout: "piped", stderr: "piped" }).output();
    return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  };
  ctx.registerCommand("probe", { description: "", handler: async (arg) => {
    const [granted, other, abstract] = arg.split(" ");
    const lines = [];
    const own = async (port) => {
      try { const r = await fetch("http://127.0.0.1:" + port + "/"); lines.push("fetch " + r.status + " " + (await r.text()).trim()); }
      catch (e) { lines.push("fetch failed " + e.name); }
    };
    await own(granted);
    await own(other);
    lines.push("curl " + (await run(["curl", "-sS", "-m", "10", "http://127.0.0.1:" + granted + "/"])).trim());
    lines.push("curl " + (await run(["curl", "-sS", "-m", "10", "http://127.0.0.1:" + other + "/"])).trim());
    lines.push("direct " + ((await run(["curl", "-sS", "-m", "5", "--noproxy", "*", "http://127.0.0.1:" + granted + "/"])).includes("granted") ? "reached" : "refused"));
    lines.push("abstract " + (await run(["perl", "-MSocket", "-e",
      'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\\\n"; connect($s, pack_sockaddr_un("\\\\0' + abstract + '")) or die "connect: $!\\\\n"; print "connected\\\\n"'])).trim());
    return lines.join("\\n");
  } });
}
`;

Deno.test({
  name: "run: a plugin's host list holds for the programs it runs (run: [curl, perl])",
  ignore: withoutSandbox,
  async fn() {
    const targets = netTargets();
    try {
      const g = targets.granted;
      const dir = await writeFiles(await tempDir(), {
        "job.yaml": `name: plugin-net
model: { provider: scripted, script: ./r.yaml }
prompt: hi
plugins:
  - { path: ./netty.js, permissions: { net: ["127.0.0.1:${g}"], run: [curl, perl] } }
`,
        "r.yaml": "- content: unused\n",
        "netty.js": PLUGIN,
      });
      const r = await hermes([
        "run",
        "job.yaml",
        "-p",
        `/probe ${g} ${targets.other} ${targets.abstract}`,
        "--output",
        "json",
      ], {
        cwd: dir,
        home: dir,
      });
      assert.equal(r.code, 0, r.stderr);
      const lines = String(JSON.parse(r.stdout).final).split("\n");
      assert.equal(lines[0], "fetch 200 granted");
      // The plugin's own code is held by Deno's --allow-net before any connection.
      assert.match(lines[1]!, /^fetch failed (NotCapable|PermissionDenied)/);
      assert.equal(lines[2], "curl granted");
      assert.match(
        lines[3]!,
        /^curl hermes sandbox proxy: 127\.0\.0\.1:\d+ is not in the sandbox's host list$/,
      );
      assert.equal(lines[4], "direct refused");
      assert.equal(lines[5], "abstract socket: Operation not permitted");
      assert.equal(targets.accepted(), 0);
      assert.match(r.stderr, /sandbox network: refused 127\.0\.0\.1:\d+ is not in the sandbox's host list/);
    } finally {
      await targets.close();
    }
  },
});
