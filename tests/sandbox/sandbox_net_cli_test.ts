/**
 * `tools.shell.sandbox.net` as a host list through `hermes run`, the real bwrap, bridge and proxy: the
 * granted host (a local server granted by its address) is reached with curl through the proxy, the other
 * gets 403 (and the tool result names the refusal), a connection ignoring the proxy has no route, and a
 * host abstract socket stays out of reach. A malformed host is exit 2 before any model call.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { netTargets } from "../../runtime/sandbox/_testing.ts";

function job(net: string): string {
  return `name: listed
model: { provider: scripted, script: ./replies.yaml }
prompt: Fetch.
tools:
  shell: { sandbox: { net: ${net} } }
`;
}

Deno.test({
  name: "run: a shell host list reaches the granted host through the proxy and nothing else",
  ignore: withoutSandbox,
  async fn() {
    const s = netTargets();
    try {
      const command = [
        `curl -sS -m 10 http://127.0.0.1:${s.granted}/`,
        `curl -sS -m 10 http://127.0.0.1:${s.other}/`,
        `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${s.granted}/ || echo direct-refused`,
        `perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n"; ` +
        `connect($s, pack_sockaddr_un("\\0${s.abstract}")) or die "connect: $!\\n"' 2>&1`,
      ].join("; ");
      const dir = await writeFiles(await tempDir(), {
        "job.yaml": job(`["127.0.0.1:${s.granted}"]`),
        "replies.yaml": `- tool_calls: [{ name: shell, arguments: { command: ${JSON.stringify(command)} } }]
- content: Done.
`,
      });
      const { code, stderr, events } = await runEvents(dir);
      assert.equal(code, 0, stderr);
      const output = String(events.find((e) => e.type === "tool.result")?.content ?? "");
      assert.match(output, /^exit code 1\ngranted\n/, output);
      assert.match(output, /hermes sandbox proxy: 127\.0\.0\.1:\d+ is not in the sandbox's host list\n/);
      assert.match(output, /direct-refused/);
      assert.match(output, /socket: Operation not permitted/);
      assert.match(output, new RegExp(`\\[sandbox network: refused 127\\.0\\.0\\.1:${s.other} is not in`));
      assert.equal(s.accepted(), 0, "the host's abstract socket saw no client");
    } finally {
      await s.close();
    }
  },
});

Deno.test("run: a malformed shell host is exit 2 before any model call, naming the key", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(`["https://api.github.com/"]`),
    "replies.yaml": "- content: never\n",
  });
  const r = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /job\.yaml:\d+:\d+: tools\.shell\.sandbox\.net\[0\]: expected host or host:port/);
});
